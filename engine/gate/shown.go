package gate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// shownDiff is the change's diff as a model-graded gate shows it: whole
// files' diffs, the most relevant first, within a byte bound.
type shownDiff struct {
	// Text is the unified diff of the files shown, in the order shown.
	Text string
	// Files are the files shown, in order.
	Files []string
	// Omitted are the files left out, each "path (+a -d lines)"; the file
	// shown in part, if any, is among them, marked so.
	Omitted []string
}

// truncateMin is the least room worth filling with the head of a file's
// diff that does not fit whole.
const truncateMin = 1024

// Relevance tiers of a touched file, most relevant first.
const (
	tierFocus    = iota // names one of the change's requirements, or lies in its scope
	tierCode            // any other file of the work
	tierArtifact        // generated files (lockfiles), specs, markdown, run state
)

// shown returns the change's diff bounded to max bytes. Files are ranked
// by relevance (tiers above, then git's path order); each that fits whole
// is shown, and the most relevant one that did not fit fills what room is
// left, when there is at least truncateMin, cut at a line. The rest are
// listed in Omitted with their size.
func shown(ctx context.Context, in Input, d *changeDiff, max int) (shownDiff, error) {
	text, err := d.patch(ctx, -1)
	if err != nil {
		return shownDiff{}, err
	}
	chunks, err := splitDiff(text)
	if err != nil {
		return shownDiff{}, err
	}
	stats, err := d.numstat(ctx)
	if err != nil {
		return shownDiff{}, err
	}
	naming, err := namingFiles(ctx, in, d)
	if err != nil {
		return shownDiff{}, err
	}
	tier := func(path string) int {
		switch {
		case isArtifact(path) || isGenerated(in, path):
			return tierArtifact
		case naming[path] || len(in.Change.Scope) > 0 && inScope(in.Change.Scope, path):
			return tierFocus
		}
		return tierCode
	}
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(tier(chunks[a].path), tier(chunks[b].path)) })

	left := max
	show := make([]bool, len(chunks))
	for _, i := range order {
		if n := len(chunks[i].text); n <= left {
			show[i] = true
			left -= n
		}
	}
	partial := -1
	for _, i := range order {
		if !show[i] && left >= truncateMin {
			partial = i
			break
		}
	}
	var out shownDiff
	var b strings.Builder
	for _, i := range order {
		c := chunks[i]
		switch {
		case show[i]:
			b.WriteString(c.text)
			out.Files = append(out.Files, c.path)
		case i == partial:
			note := "… (the rest of this file's diff is left out)\n"
			head := c.text[:left-len(note)]
			head = head[:strings.LastIndexByte(head, '\n')+1]
			b.WriteString(head + note)
			out.Files = append(out.Files, c.path)
			out.Omitted = append(out.Omitted, fmt.Sprintf("%s (shown in part; %s)", c.path, stats[c.path]))
		default:
			out.Omitted = append(out.Omitted, fmt.Sprintf("%s (%s)", c.path, stats[c.path]))
		}
	}
	out.Text = b.String()
	return out, nil
}

// namingFiles are the files whose added lines name one of the change's
// requirement IDs.
func namingFiles(ctx context.Context, in Input, d *changeDiff) (map[string]bool, error) {
	out := map[string]bool{}
	if len(in.Change.Requirements) == 0 {
		return out, nil
	}
	files, err := d.added(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		for _, l := range f.Added {
			if slices.ContainsFunc(in.Change.Requirements, func(id string) bool { return containsID(l.Text, id) }) {
				out[f.Path] = true
				break
			}
		}
	}
	return out, nil
}

// numstat returns, by path, the size of each file's change: "+a -d lines",
// or "binary".
func (d *changeDiff) numstat(ctx context.Context) (map[string]string, error) {
	st, err := d.stats(ctx)
	if err != nil {
		return nil, err
	}
	stats := map[string]string{}
	for _, s := range st {
		if s.Binary {
			stats[s.Path] = "binary"
			continue
		}
		stats[s.Path] = fmt.Sprintf("+%d -%d lines", s.Added, s.Deleted)
	}
	return stats, nil
}

// fileChunk is the part of a unified diff about one file.
type fileChunk struct {
	path, text string
}

// splitDiff cuts a unified diff, as `git diff` writes it with the a/ and b/
// prefixes, into its files' parts, each ending with a newline (git.Run
// trims the output's last one).
func splitDiff(text string) ([]fileChunk, error) {
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	var chunks []fileChunk
	for len(text) > 0 {
		end := strings.Index(text, "\ndiff --git ")
		if end < 0 {
			end = len(text)
		} else {
			end++
		}
		c := text[:end]
		text = text[end:]
		if !strings.HasPrefix(c, "diff --git ") {
			return nil, fmt.Errorf("git diff: unexpected output %q", clip(c, 80))
		}
		p, err := chunkPath(c)
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, fileChunk{path: p, text: c})
	}
	return chunks, nil
}

// chunkPath is the path of one file's part of a diff: its "+++ b/" header,
// its "--- a/" header for a deleted file, else (a binary file, a mode
// change) its "diff --git a/P b/P" line.
func chunkPath(c string) (string, error) {
	head, _, _ := strings.Cut(c, "\n@@ ")
	lines := strings.Split(head, "\n")
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "+++ "); ok {
			if p, err := diffPath(rest); err != nil || p != "" {
				return p, err
			}
		}
	}
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "--- "); ok {
			rest = strings.TrimSuffix(rest, "\t")
			if strings.HasPrefix(rest, `"`) {
				u, err := strconv.Unquote(rest)
				if err != nil {
					return "", fmt.Errorf("bad quoted path %s", rest)
				}
				rest = u
			}
			if p, ok := strings.CutPrefix(rest, "a/"); ok {
				return p, nil
			}
		}
	}
	s := strings.TrimPrefix(lines[0], "diff --git ")
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", fmt.Errorf("git diff: bad header %q", lines[0])
		}
		u, _ := strconv.Unquote(q)
		if p, ok := strings.CutPrefix(u, "a/"); ok {
			return p, nil
		}
		return "", fmt.Errorf("git diff: bad header %q", lines[0])
	}
	// "a/P b/P": both sides name the same path (no renames).
	if n := (len(s) - 5) / 2; n > 0 && len(s) == 2*n+5 && s[:2] == "a/" && s[2+n:2+n+3] == " b/" && s[2:2+n] == s[2+n+3:] {
		return s[2 : 2+n], nil
	}
	return "", fmt.Errorf("git diff: bad header %q", lines[0])
}
