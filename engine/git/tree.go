package git

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// FilesAt returns the content of every regular file under the directory
// prefix (a slash path relative to the repository's top) in the tree of
// commit rev: path → content. Symbolic links and submodules are left out.
// A prefix the tree does not have gives an empty map.
func FilesAt(ctx context.Context, dir, rev, prefix string) (map[string][]byte, error) {
	entries, err := lsTree(ctx, dir, "-r", "--full-tree", rev+"^{commit}", "--", prefix)
	if err != nil {
		return nil, err
	}
	var regular []treeEntry
	var ids strings.Builder
	for _, e := range entries {
		if e.regular() {
			regular = append(regular, e)
			ids.WriteString(e.object + "\n")
		}
	}
	files := map[string][]byte{}
	if len(regular) == 0 {
		return files, nil
	}
	// One git for every blob: a tree with a long archive has hundreds.
	out, err := runInput(ctx, dir, nil, 0, strings.NewReader(ids.String()), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	for _, e := range regular {
		data, rest, err := batchBlob(out, e.object)
		if err != nil {
			return nil, fmt.Errorf("git cat-file --batch, %s at %s: %w", e.path, rev, err)
		}
		files[e.path], out = data, rest
	}
	return files, nil
}

// batchBlob reads the first object of out, the output of git cat-file
// --batch ("<object> blob <size>\n<content>\n" per object asked for), and
// returns its content and the rest of out; an error when it is not the
// blob object.
func batchBlob(out, object string) (data []byte, rest string, err error) {
	header, body, ok := strings.Cut(out, "\n")
	fields := strings.Fields(header)
	if !ok || len(fields) != 3 || fields[0] != object || fields[1] != "blob" {
		return nil, "", fmt.Errorf("want blob %s, got %q", object, header)
	}
	size, err := strconv.Atoi(fields[2])
	if err != nil || size < 0 || len(body) < size+1 || body[size] != '\n' {
		return nil, "", fmt.Errorf("blob %s: a malformed entry %q", object, header)
	}
	return []byte(body[:size]), body[size+1:], nil
}

// FileAt returns the content of the regular file path (a slash path
// relative to the repository's top) in the tree of commit rev; an error
// that wraps fs.ErrNotExist when the tree has no such file (or has a
// symbolic link or a directory there).
func FileAt(ctx context.Context, dir, rev, path string) ([]byte, error) {
	entries, err := lsTree(ctx, dir, "--full-tree", rev+"^{commit}", "--", path)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.path == path && e.regular() {
			data, err := run(ctx, dir, "cat-file", "blob", e.object)
			return []byte(data), err
		}
	}
	return nil, fmt.Errorf("%s at %s: %w", path, rev, fs.ErrNotExist)
}

// treeEntry is an entry git ls-tree lists: "<mode> <type> <object>\t<path>".
type treeEntry struct{ mode, typ, object, path string }

// regular reports whether the entry is a file that is not a symbolic
// link.
func (e treeEntry) regular() bool { return e.typ == "blob" && e.mode != "120000" }

// lsTree runs git ls-tree -z with args in dir and returns its entries.
func lsTree(ctx context.Context, dir string, args ...string) ([]treeEntry, error) {
	out, err := run(ctx, dir, append([]string{"ls-tree", "-z"}, args...)...)
	if err != nil {
		return nil, err
	}
	var entries []treeEntry
	for _, entry := range strings.Split(out, "\x00") {
		if entry == "" {
			continue
		}
		meta, path, ok := strings.Cut(entry, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("git ls-tree: unexpected entry %q", entry)
		}
		entries = append(entries, treeEntry{mode: f[0], typ: f[1], object: f[2], path: path})
	}
	return entries, nil
}

// Commit is a commit and its message.
type Commit struct {
	ID      string
	Message string
}

// Log returns the commits of the first-parent history of rev whose message
// has a line matching the extended regexp grep, newest first.
func Log(ctx context.Context, dir, rev, grep string) ([]Commit, error) {
	out, err := run(ctx, dir, "log", "--first-parent", "-z", "--format=%H%n%B", "--extended-regexp", "--grep="+grep, rev, "--")
	if err != nil {
		return nil, err
	}
	return parseLog(out), nil
}

// FirstParents returns the commits of the first-parent history of rev,
// newest first.
func FirstParents(ctx context.Context, dir, rev string) ([]string, error) {
	out, err := Run(ctx, dir, "rev-list", "--first-parent", rev, "--")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// TreeFiles lists the paths of the regular files in the tree of commit
// rev, in git's order.
func TreeFiles(ctx context.Context, dir, rev string) ([]string, error) {
	entries, err := lsTree(ctx, dir, "-r", "--full-tree", rev+"^{commit}")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range entries {
		if e.regular() {
			paths = append(paths, e.path)
		}
	}
	return paths, nil
}

// GrepLine is a line git grep found.
type GrepLine struct {
	Path string
	Line int
	Text string
}

// Grep returns the lines of the given files (paths relative to the
// repository's top) in the tree of commit rev that match the extended
// regexp pattern, in path and line order. Binary files are skipped.
func Grep(ctx context.Context, dir, rev, pattern string, paths []string) ([]GrepLine, error) {
	var out []GrepLine
	const batch = 500 // keeps the argument list short
	for start := 0; start < len(paths); start += batch {
		args := []string{"grep", "-z", "-n", "-I", "--no-color", "-E", "-e", pattern, rev + "^{commit}", "--"}
		for _, p := range paths[start:min(start+batch, len(paths))] {
			args = append(args, ":(literal)"+p)
		}
		text, err := run(ctx, dir, args...)
		if exitCode(err) == 1 {
			continue // no line matched
		}
		if err != nil {
			return nil, err
		}
		// Each line is "<rev>:<path>\0<line>\0<text>\n".
		for _, l := range strings.Split(text, "\n") {
			f := strings.SplitN(l, "\x00", 3)
			if len(f) != 3 {
				continue
			}
			_, path, _ := strings.Cut(f[0], ":")
			n, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, fmt.Errorf("git grep: unexpected line %q", l)
			}
			out = append(out, GrepLine{Path: path, Line: n, Text: f[2]})
		}
	}
	return out, nil
}
