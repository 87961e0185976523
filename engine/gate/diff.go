package gate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/set-engine/set/engine/git"
)

// changeDiff reads what a change did to its tree compared with its base
// commit: the commits since the base plus uncommitted edits to tracked
// files (`git diff <base>` against the working tree). Untracked files are
// not seen; the agent loop commits everything before gates run. Renames
// are reported as a deletion and an addition, so both paths count as
// touched. Each view is read from git at most once.
type changeDiff struct {
	dir, base string

	names    []string
	namesErr error
	namesOK  bool

	hunks    []fileDiff
	hunksErr error
	hunksOK  bool
}

// baseCommit is the commit the change's diff is read against; none is an error.
func (d *changeDiff) baseCommit() (string, error) {
	if d.base == "" {
		return "", errors.New("no base commit to diff against")
	}
	return d.base, nil
}

// files returns the paths the change touches (added, modified or deleted),
// sorted as git sorts them.
func (d *changeDiff) files(ctx context.Context) ([]string, error) {
	if !d.namesOK {
		base, err := d.baseCommit()
		if err == nil {
			d.names, err = git.DiffNames(ctx, d.dir, base)
		}
		d.namesErr, d.namesOK = err, true
	}
	return d.names, d.namesErr
}

// statuses returns how each touched path changed.
func (d *changeDiff) statuses(ctx context.Context) ([]git.PathStatus, error) {
	base, err := d.baseCommit()
	if err != nil {
		return nil, err
	}
	return git.DiffStatus(ctx, d.dir, base)
}

// links returns the paths the change makes symbolic links (added as
// links, or turned into links), in git's order.
func (d *changeDiff) links(ctx context.Context) ([]string, error) {
	base, err := d.baseCommit()
	if err != nil {
		return nil, err
	}
	return git.DiffLinks(ctx, d.dir, base)
}

// patch returns the change's unified diff with context lines of context
// (git's default when negative).
func (d *changeDiff) patch(ctx context.Context, context int) (string, error) {
	base, err := d.baseCommit()
	if err != nil {
		return "", err
	}
	return git.DiffPatch(ctx, d.dir, base, context)
}

// stats returns the size of each touched path's change.
func (d *changeDiff) stats(ctx context.Context) ([]git.DiffStat, error) {
	base, err := d.baseCommit()
	if err != nil {
		return nil, err
	}
	return git.DiffStats(ctx, d.dir, base)
}

// added returns the lines the change adds, per file.
func (d *changeDiff) added(ctx context.Context) ([]fileDiff, error) {
	if !d.hunksOK {
		out, err := d.patch(ctx, 0)
		if err == nil {
			d.hunks, err = parseUnified(out)
		}
		d.hunksErr, d.hunksOK = err, true
	}
	return d.hunks, d.hunksErr
}

// fileDiff is the added lines of one file that exists after the change.
type fileDiff struct {
	Path  string
	Added []addedLine
}

// addedLine is one added line and its 1-based number in the new file.
type addedLine struct {
	Line int
	Text string
}

// parseUnified reads the added lines out of a unified diff as `git diff`
// writes it with b/ as the destination prefix. Hunk bodies are consumed by
// the counts in their @@ header, so an added line that itself starts with
// "++ " is never mistaken for a file header. Deleted files have no entry.
func parseUnified(text string) ([]fileDiff, error) {
	var (
		files            []fileDiff
		cur              *fileDiff
		oldLeft, newLeft int
		newLine          int
	)
	for n, line := range strings.Split(text, "\n") {
		if oldLeft > 0 || newLeft > 0 {
			switch {
			case strings.HasPrefix(line, "+") && newLeft > 0:
				if cur != nil {
					cur.Added = append(cur.Added, addedLine{Line: newLine, Text: line[1:]})
				}
				newLine++
				newLeft--
				continue
			case strings.HasPrefix(line, "-") && oldLeft > 0:
				oldLeft--
				continue
			case strings.HasPrefix(line, " ") && oldLeft > 0 && newLeft > 0:
				oldLeft--
				newLeft--
				newLine++
				continue
			case strings.HasPrefix(line, `\`): // "\ No newline at end of file"
				continue
			case line == "" && oldLeft > 0 && newLeft > 0:
				// A context line whose only character, a space, was
				// trimmed away.
				oldLeft--
				newLeft--
				newLine++
				continue
			}
			return nil, fmt.Errorf("diff line %d: %q does not fit the hunk (%d old, %d new lines left)", n+1, line, oldLeft, newLeft)
		}
		switch {
		case strings.HasPrefix(line, "diff --git "):
			cur = nil
		case strings.HasPrefix(line, "+++ "):
			p, err := diffPath(line[len("+++ "):])
			if err != nil {
				return nil, fmt.Errorf("diff line %d: %w", n+1, err)
			}
			if p == "" {
				cur = nil
				continue
			}
			files = append(files, fileDiff{Path: p})
			cur = &files[len(files)-1]
		case strings.HasPrefix(line, "@@ "):
			var err error
			oldLeft, newLine, newLeft, err = parseHunkHeader(line)
			if err != nil {
				return nil, fmt.Errorf("diff line %d: %w", n+1, err)
			}
		}
	}
	return files, nil
}

// diffPath returns the path of a "+++ " header without its b/ prefix, or
// "" for /dev/null. Git quotes unusual names C-style and ends a name that
// holds a space with a tab.
func diffPath(s string) (string, error) {
	s = strings.TrimSuffix(s, "\t")
	if s == "/dev/null" {
		return "", nil
	}
	if strings.HasPrefix(s, `"`) {
		u, err := strconv.Unquote(s)
		if err != nil {
			return "", fmt.Errorf("bad quoted path %s", s)
		}
		s = u
	}
	p, ok := strings.CutPrefix(s, "b/")
	if !ok {
		return "", fmt.Errorf("path %q lacks the b/ prefix", s)
	}
	return p, nil
}

// parseHunkHeader reads "@@ -a[,b] +c[,d] @@…" into the old line count b,
// the first new line c and the new line count d (counts default to 1).
func parseHunkHeader(line string) (oldCount, newStart, newCount int, err error) {
	fields := strings.Fields(line)
	if len(fields) < 4 || fields[3] != "@@" || !strings.HasPrefix(fields[1], "-") || !strings.HasPrefix(fields[2], "+") {
		return 0, 0, 0, fmt.Errorf("bad hunk header %q", line)
	}
	_, oldCount, err = parseRange(fields[1][1:])
	if err != nil {
		return 0, 0, 0, fmt.Errorf("bad hunk header %q: %w", line, err)
	}
	newStart, newCount, err = parseRange(fields[2][1:])
	if err != nil {
		return 0, 0, 0, fmt.Errorf("bad hunk header %q: %w", line, err)
	}
	return oldCount, newStart, newCount, nil
}

func parseRange(s string) (start, count int, err error) {
	a, b, hasCount := strings.Cut(s, ",")
	if start, err = strconv.Atoi(a); err != nil {
		return 0, 0, err
	}
	count = 1
	if hasCount {
		if count, err = strconv.Atoi(b); err != nil {
			return 0, 0, err
		}
	}
	return start, count, nil
}
