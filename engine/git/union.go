package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// UnionAttributes lists the paths (relative to dir, slash-separated)
// whose `merge` attribute is `union` in dir's .gitattributes (git's own
// union driver), in the order given.
func UnionAttributes(ctx context.Context, dir string, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	out, err := run(ctx, dir, append([]string{"check-attr", "-z", "merge", "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	// -z: path NUL attribute NUL value NUL, per path.
	fields := strings.Split(out, "\x00")
	isUnion := map[string]bool{}
	for i := 0; i+2 < len(fields); i += 3 {
		if fields[i+2] == "union" {
			isUnion[fields[i]] = true
		}
	}
	var union []string
	for _, p := range paths {
		if isUnion[p] {
			union = append(union, p)
		}
	}
	return union, nil
}

// ResolveUnion resolves the unmerged path (relative to dir) of the merge in
// progress in dir as git's union driver does: the lines of both sides,
// ours then theirs, around what they share with the merge base
// (`git merge-file --union` on the three stages; a file both sides added
// has an empty base). It writes the result to the worktree and stages it.
// It reports false, changing nothing, when the conflict is not one of
// text in a regular file on both sides (a side deleted it, a symlink, a
// submodule, a binary file). It never touches the repository's
// configuration: no merge driver is installed.
func ResolveUnion(ctx context.Context, dir, path string) (bool, error) {
	out, err := run(ctx, dir, "ls-files", "-u", "-z", "--", path)
	if err != nil {
		return false, err
	}
	var blob [4]string // by stage
	mode := ""
	for _, entry := range strings.Split(out, "\x00") {
		meta, name, ok := strings.Cut(entry, "\t")
		if !ok || name != path {
			continue
		}
		f := strings.Fields(meta) // mode object stage
		if len(f) != 3 || len(f[2]) != 1 || f[2][0] < '1' || f[2][0] > '3' {
			continue
		}
		if f[0] != "100644" && f[0] != "100755" {
			return false, nil
		}
		blob[f[2][0]-'0'] = f[1]
		if f[2] == "2" {
			mode = f[0]
		}
	}
	if blob[2] == "" || blob[3] == "" {
		return false, nil
	}
	tmp, err := os.MkdirTemp("", "set-union-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	var files [4]string
	for stage := 1; stage <= 3; stage++ {
		content := ""
		if blob[stage] != "" {
			if content, err = run(ctx, dir, "cat-file", "blob", blob[stage]); err != nil {
				return false, err
			}
		}
		if strings.IndexByte(content, 0) >= 0 {
			return false, nil // binary
		}
		files[stage] = filepath.Join(tmp, []string{"", "base", "ours", "theirs"}[stage])
		if err := os.WriteFile(files[stage], []byte(content), 0o600); err != nil {
			return false, err
		}
	}
	merged, err := run(ctx, dir, "merge-file", "--union", "-p", files[2], files[1], files[3])
	if err != nil {
		return false, err
	}
	perm := os.FileMode(0o644)
	if mode == "100755" {
		perm = 0o755
	}
	target := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.WriteFile(target, []byte(merged), perm); err != nil {
		return false, err
	}
	if _, err := run(ctx, dir, "add", "--", path); err != nil {
		return false, err
	}
	return true, nil
}
