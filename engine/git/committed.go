package git

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Drift is how a file of a working tree stands apart from a
// branch's tree (see NotCommittedOn).
type Drift string

const (
	// Untracked: git does not know the file (neither the branch nor the
	// index holds it).
	Untracked Drift = "untracked"
	// NotOnBranch: the file is tracked (added, or committed on another
	// branch) but the branch's tree has no file at that path.
	NotOnBranch Drift = "not on the branch"
	// DiffersFromBranch: the branch's tree holds the file with other
	// content than the working tree's (an edit not committed, or
	// committed on another branch).
	DiffersFromBranch Drift = "differs from the branch"
)

// NotCommittedOn returns, for those of paths (slash paths relative to dir,
// files of dir's working tree) whose content is not what branch's tree
// holds at that path, how each stands apart; a path committed on branch
// as it is on disk is left out. Content is compared as git add would
// store the file (its clean filters applied), so a file that git add
// would leave unchanged is committed. A path that no longer exists on
// disk is left out: there is nothing to commit.
func NotCommittedOn(ctx context.Context, dir, branch string, paths []string) (map[string]Drift, error) {
	out := map[string]Drift{}
	// Every command below runs at the top of the repository, with paths
	// from the top (dir may be a subdirectory of it).
	top, err := Run(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	prefix, err := Run(ctx, dir, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	full := make([]string, 0, len(paths))
	rel := map[string]string{} // full path → path as asked
	for _, p := range paths {
		f := path.Join(prefix, p)
		if _, dup := rel[f]; dup {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			continue
		}
		rel[f] = p
		full = append(full, f)
	}

	if len(full) == 0 {
		return out, nil
	}
	onBranch, err := blobsAt(ctx, top, "refs/heads/"+branch, full)
	if err != nil {
		return nil, err
	}
	tracked, err := listed(ctx, top, append([]string{"ls-files", "-z", "--full-name", "--"}, literal(full)...))
	if err != nil {
		return nil, err
	}
	hashes, err := run(ctx, top, append([]string{"hash-object", "--"}, full...)...)
	if err != nil {
		return nil, err
	}
	for i, h := range strings.Fields(hashes) {
		f := full[i]
		blob, ok := onBranch[f]
		switch {
		case ok && blob == h:
		case ok:
			out[rel[f]] = DiffersFromBranch
		case tracked[f]:
			out[rel[f]] = NotOnBranch
		default:
			out[rel[f]] = Untracked
		}
	}
	return out, nil
}

// blobsAt maps those of paths (from the top) that rev's tree holds as
// files to their blob IDs.
func blobsAt(ctx context.Context, top, rev string, paths []string) (map[string]string, error) {
	entries, err := lsTree(ctx, top, append([]string{"--full-tree", rev + "^{commit}", "--"}, literal(paths)...)...)
	if err != nil {
		return nil, err
	}
	blobs := map[string]string{}
	for _, e := range entries {
		if e.typ == "blob" {
			blobs[e.path] = e.object
		}
	}
	return blobs, nil
}

// listed runs a git command that prints NUL-terminated paths and returns
// them as a set.
func listed(ctx context.Context, dir string, args []string) (map[string]bool, error) {
	out, err := run(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			set[p] = true
		}
	}
	return set, nil
}

// literal makes paths pathspecs that match exactly those paths (no glob).
func literal(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(literal)" + p
	}
	return out
}
