package git

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// The Diff functions read what the work tree in dir changed since the
// commit base: the commits since base plus the uncommitted edits to
// tracked files (`git diff <base>` against the work tree). Untracked
// files are not seen. Renames are a deletion and an addition, so that
// both paths count as touched. Paths are as written, never quoted, and
// come in git's order.

// diffArgs precede every diff: no path quoting, no colour, no external or
// textconv drivers and no rename detection, whatever the user's
// configuration says.
var diffArgs = []string{
	"-c", "core.quotePath=false",
	"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
}

// diff runs `git diff` with diffArgs, then args, against base.
func diff(ctx context.Context, dir, base string, args ...string) (string, error) {
	argv := append(append([]string{}, diffArgs...), args...)
	argv = append(argv, base, "--")
	return Run(ctx, dir, argv...)
}

// DiffNames lists the paths changed since base: added, modified or
// deleted.
func DiffNames(ctx context.Context, dir, base string) ([]string, error) {
	out, err := diff(ctx, dir, base, "--name-only", "-z")
	return splitNUL(out), err
}

// PathStatus is a path a diff touches and how.
type PathStatus struct {
	Status byte // 'A' added, 'M' modified, 'D' deleted, 'T' type changed …
	Path   string
}

// DiffStatus lists the paths changed since base and how each changed.
func DiffStatus(ctx context.Context, dir, base string) ([]PathStatus, error) {
	out, err := diff(ctx, dir, base, "--name-status", "-z")
	if err != nil {
		return nil, err
	}
	return parseNameStatus("git diff --name-status", out)
}

// parseNameStatus reads the -z output of --name-status: the status and
// the path of each entry, NUL-separated.
func parseNameStatus(what, out string) ([]PathStatus, error) {
	fields := splitNUL(out)
	if len(fields)%2 != 0 {
		return nil, fmt.Errorf("%s: odd output %q", what, out)
	}
	var st []PathStatus
	for i := 0; i < len(fields); i += 2 {
		st = append(st, PathStatus{Status: fields[i][0], Path: fields[i+1]})
	}
	return st, nil
}

// DiffLinks lists the paths the work tree makes symbolic links since
// base: added as links, or turned into links.
func DiffLinks(ctx context.Context, dir, base string) ([]string, error) {
	out, err := diff(ctx, dir, base, "--raw", "-z", "--no-abbrev")
	if err != nil {
		return nil, err
	}
	// Each entry is ":<old mode> <new mode> <old id> <new id> <status>" and
	// the path, NUL-separated.
	fields := splitNUL(out)
	if len(fields)%2 != 0 {
		return nil, fmt.Errorf("git diff --raw: odd output %q", out)
	}
	var links []string
	for i := 0; i < len(fields); i += 2 {
		meta := strings.Fields(fields[i])
		if len(meta) < 2 {
			return nil, fmt.Errorf("git diff --raw: unexpected entry %q", fields[i])
		}
		if meta[1] == "120000" {
			links = append(links, fields[i+1])
		}
	}
	return links, nil
}

// DiffStat is the size of one file's change.
type DiffStat struct {
	Path           string
	Added, Deleted int
	// Binary is set for a binary file, whose lines git does not count.
	Binary bool
}

// DiffStats gives the size of each path's change since base.
func DiffStats(ctx context.Context, dir, base string) ([]DiffStat, error) {
	out, err := diff(ctx, dir, base, "--numstat", "-z")
	if err != nil {
		return nil, err
	}
	var stats []DiffStat
	// Each entry is "added\tdeleted\tpath" ("-\t-\tpath" for a binary
	// file), NUL-terminated.
	for _, e := range splitNUL(out) {
		f := strings.SplitN(e, "\t", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("git diff --numstat: unexpected entry %q", e)
		}
		if f[0] == "-" {
			stats = append(stats, DiffStat{Path: f[2], Binary: true})
			continue
		}
		added, aerr := strconv.Atoi(f[0])
		deleted, derr := strconv.Atoi(f[1])
		if aerr != nil || derr != nil {
			return nil, fmt.Errorf("git diff --numstat: unexpected entry %q", e)
		}
		stats = append(stats, DiffStat{Path: f[2], Added: added, Deleted: deleted})
	}
	return stats, nil
}

// DiffPatch is the unified diff of the changes since base, with the a/ and
// b/ prefixes whatever the configuration says, and context lines of
// context (git's default of 3 when context is negative). Its last newline
// is trimmed.
func DiffPatch(ctx context.Context, dir, base string, context int) (string, error) {
	args := []string{"--src-prefix=a/", "--dst-prefix=b/"}
	if context >= 0 {
		args = append([]string{"-U" + strconv.Itoa(context)}, args...)
	}
	return diff(ctx, dir, base, args...)
}

// splitNUL splits NUL-separated output into its non-empty fields.
func splitNUL(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, "\x00") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}
