package gate

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/set-engine/set/engine/english"
)

// CommandMarker starts the line an exec gate's command prints to name the
// program it runs for the gate, as the user would type it, just before it
// runs it: "[set] $ npm test". A profile's gate is a shell script that
// picks that program from the project (npm, pnpm or yarn; xo, eslint or
// biome; mypy with or without paths), and a message about the gate names
// what the last such line says (Result.Command) rather than the script.
// A gate whose output has no such line is named by CommandLine of its
// argv.
const CommandMarker = "[set] $ "

// CommandLine is argv as a message names it, one line: as a shell reader
// would type it, except that an argument of several lines (a script) is
// cut to its first line followed by "…", and what follows it left out.
// It is for reading, not for pasting into a shell.
func CommandLine(argv []string) string {
	parts := make([]string, 0, len(argv))
	for _, a := range argv {
		first, rest, multi := strings.Cut(a, "\n")
		if !multi {
			parts = append(parts, shellQuote(a))
			continue
		}
		if strings.TrimSpace(first) == "" && strings.TrimSpace(rest) != "" {
			// A script that starts with a blank line: its first line that
			// says something.
			first, _, _ = strings.Cut(strings.TrimLeft(rest, " \t\n"), "\n")
		}
		parts = append(parts, shellQuote(strings.TrimRight(first, " \t")+" …"))
		break
	}
	return strings.Join(parts, " ")
}

// missingTailLines is how many of the last lines of a failed command's
// output may say that a program is missing, when neither the exit code
// (127) nor an earlier failed gate makes it likely: the program's
// launcher stops right after saying so.
const missingTailLines = 3

// missingPatterns are the lines that say a program (or a Python module)
// a command runs is not there: POSIX shells and bash ("sh: 1: xo: not
// found", "bash: line 1: xo: command not found"), npm exec --no (npx)
// refusing to download a package the project did not install, Python's
// -m without the module, node's require or import of a package that is
// not installed, Go's os/exec. The group of a program pattern names the
// program; that of the others is the message as shown.
var missingPatterns = []struct {
	re      *regexp.Regexp
	program bool
}{
	{regexp.MustCompile(`(?:^|\s)(\S+): (?:command )?not found\s*$`), true},
	{regexp.MustCompile(`exec: "([^"]+)": executable file not found`), true},
	{regexp.MustCompile(`(?:^|: )(No module named '?[\w.]+'?)\s*$`), false},
	{regexp.MustCompile(`(npx canceled due to missing packages.*)$`), false},
	{regexp.MustCompile(`(Cannot find (?:module|package) '[^']+')`), false},
}

// missingProgram says which program (or module) a command that exited with
// exitCode could not find, from tail, the end of its output: "xo: not
// found", "No module named pytest". A line that says so counts anywhere
// in tail when the exit code is 127 (a shell's "command not found") or
// after is set (an earlier gate of the stack failed: an install, most
// likely), else only among the last missingTailLines lines that are not
// blank: a test's own output may say "not found". Exit code 127 without
// such a line is said by the last line of output (a script's own
// explanation), or as such when there is none. "" when nothing was
// missing.
func missingProgram(exitCode int, tail string, after bool) string {
	wide := exitCode == 127 || after
	lines := strings.Split(strings.TrimRight(tail, "\n"), "\n")
	seen := 0
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		seen++
		if !wide && seen > missingTailLines {
			break
		}
		for _, p := range missingPatterns {
			m := p.re.FindStringSubmatch(l)
			switch {
			case m == nil:
				continue
			case p.program:
				return m[1] + ": not found"
			}
			return m[1]
		}
	}
	if exitCode != 127 {
		return ""
	}
	// The command's own words, when it says why (a profile's script:
	// "ruff is configured … but neither installed … nor on PATH").
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, CommandMarker) {
			return clip(l, maxMissingLine)
		}
	}
	return "a program it runs was not found (exit code 127)"
}

// maxMissingLine bounds the line of output Missing quotes.
const maxMissingLine = 240

// Cause says why a failed exec gate could not run, as a message's clause
// after "could not run:": the program it did not find (Result.Missing)
// and the gates of its stack that failed before it on the same tree
// (Result.After), the likely reason it is missing: "xo: not found — the
// install gate failed before it". "" when nothing was missing: a gate
// that ran is not said to fail because an earlier one did, since the two
// may be unrelated (gofmt and a linter).
func Cause(missing string, after []string) string {
	if missing == "" {
		return ""
	}
	was := ""
	switch len(after) {
	case 0:
	case 1:
		was = fmt.Sprintf("the %s gate failed before it", after[0])
	default:
		was = fmt.Sprintf("the %s gates failed before it", english.List(after))
	}
	if was == "" {
		return missing
	}
	return missing + " — " + was
}

// Caused reports whether r's failure follows from something else than
// what the gate checks: a program it runs was missing (after, maybe, an
// earlier gate of its stack failed). Such a failure is reported as "could
// not run", and no failures pattern could name it.
func (r Result) Caused() bool { return r.Missing != "" }
