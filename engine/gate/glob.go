package gate

import "github.com/set-engine/set/engine/pathglob"

// matchGlob reports whether the slash-separated relative path name matches
// pattern (see pathglob.Match).
func matchGlob(pattern, name string) bool { return pathglob.Match(pattern, name) }

// matchAny reports whether name matches one of patterns.
func matchAny(patterns []string, name string) bool { return pathglob.Any(patterns, name) }

// inScope reports whether name lies inside one of the scope entries (see
// pathglob.InScope).
func inScope(scope []string, name string) bool { return pathglob.InScope(scope, name) }
