package git

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/set-engine/set/engine/atomicfile"
	"github.com/set-engine/set/engine/english"
)

// Moving a branch that is not checked out is one atomic ref update. Moving
// the branch checked out in the root is not: git writes the files, then
// the index, then the ref, so a process killed in between leaves the
// checkout half-way: some files of the new commit with the index and HEAD
// at the old one (and a stale index.lock), or files and index new and HEAD
// old (git status shows the move as staged changes). FastForward records
// such a move in a file before it starts and removes the record once the
// ref moved; FinishFastForward finishes a recorded move that was
// interrupted, and only when the checkout holds nothing but the move's own
// writes.

// FastForwardRecord is a move of the branch checked out in the root, from
// commit From to its descendant To, that FastForward has begun.
type FastForwardRecord struct {
	Branch string `json:"branch"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// FastForward moves branch in the repository at root to commit, which must
// descend from the branch's current commit old. When the branch is checked
// out in root itself, the checkout's files move with it (git merge
// --ff-only), and the move fails rather than overwrite local edits; the
// move is recorded at the path record (a FastForwardRecord) from before
// git starts until the branch has moved, and left there when git failed
// half-way, for FinishFastForward. Otherwise the ref moves by
// compare-and-swap against old, in one step, and record is not written.
//
// Checked out, the move takes two git processes: HEAD is checked to be at
// old, and git merge --ff-only, which refuses anything but a
// fast-forward, moves the files, the index and the ref. (It, not
// read-tree, moves the checkout: it refreshes the index first, so a file
// merely touched is no local edit.)
func FastForward(ctx context.Context, root, branch, old, commit, record string) error {
	if CurrentBranch(ctx, root) != branch {
		ok, err := IsAncestor(ctx, root, old, commit)
		if err != nil {
			return err
		}
		if !ok {
			return notDescending(branch, old, commit)
		}
		_, err = Run(ctx, root, "update-ref", "-m", "set: fast-forward", "refs/heads/"+branch, commit, old)
		return err
	}
	if cur := Head(ctx, root); cur != old {
		return fmt.Errorf("refusing to move %s: it is at %s, expected %s", branch, short(cur), short(old))
	}
	rec := FastForwardRecord{Branch: branch, From: old, To: commit}
	if err := writeRecord(record, rec); err != nil {
		return err
	}
	args := append(identity(ctx, root), "merge", "--ff-only", "-q", commit)
	if _, err := Run(ctx, root, args...); err != nil {
		// git refuses before it writes anything when local edits or
		// untracked files are in the way, or commit does not descend
		// from old: then there is nothing to finish. Whatever it did
		// write stays recorded.
		if Head(ctx, root) == old {
			if m, ierr := inspectMove(ctx, root, rec); ierr == nil && len(m.written) == 0 {
				if rerr := removeRecord(record); rerr != nil {
					return errors.Join(err, rerr)
				}
			}
			if ok, aerr := IsAncestor(ctx, root, old, commit); aerr == nil && !ok {
				return notDescending(branch, old, commit)
			}
		}
		return err
	}
	return removeRecord(record)
}

func notDescending(branch, old, commit string) error {
	return fmt.Errorf("refusing to move %s: %s does not descend from %s", branch, short(commit), short(old))
}

// FinishedMove is an interrupted move that FinishFastForward finished.
type FinishedMove struct {
	FastForwardRecord
	// Written are the paths the interrupted move had already written, in
	// the checkout's index or files, sorted.
	Written []string
}

// HalfMovedError is a checkout that an interrupted FastForward left
// half-way and that also holds changes the move does not explain:
// finishing the move would lose them, so FinishFastForward touched
// nothing.
type HalfMovedError struct {
	Root string
	FastForwardRecord
	// Paths are the changed paths the move does not explain, sorted.
	Paths []string
}

func (e *HalfMovedError) Error() string {
	paths := english.Cut(e.Paths, 5)
	return fmt.Sprintf("%s is checked out in %s half-way through the fast-forward setctl began from %s to %s, "+
		"and these paths hold changes setctl did not make: %s. setctl leaves the checkout as it is: save what you need of those changes elsewhere, "+
		"put each path back as HEAD has it (git checkout HEAD -- PATH; delete a file HEAD lacks), then run setctl apply again to finish the fast-forward",
		e.Branch, e.Root, short(e.From), short(e.To), strings.Join(paths, ", "))
}

// FinishFastForward finishes the move that FastForward recorded at record
// and did not end: it moves the root's index and files to the record's To
// (git read-tree --reset -u, which writes over what the interrupted move
// left, untracked files included), then the branch, by compare-and-swap
// against From, and removes the record. It does so only when the root has
// the branch checked out at From and every path of the checkout that
// differs from From (in the index or the files, untracked files included)
// is one the move changes, holding From's or To's content both in the
// index and in the files (or the start of To's in a file git was
// writing): what the move wrote, or had yet to write (see inspectMove).
// Anything else is a *HalfMovedError, and the checkout and the record are
// left as they are. Killed in turn, it leaves a state it finishes.
//
// A record that needs no finishing is removed: its branch at To already
// (git moves the ref last), or no longer checked out at From (moved since
// by someone else), or a To the repository lacks with nothing of it
// written (the commit was not durable when the machine stopped). It
// returns what it finished, or nil. As RemoveLocks, it is for a caller
// that knows no git process runs in the repository; a stale index.lock
// left by the interrupted move makes it fail, touching nothing.
func FinishFastForward(ctx context.Context, root, record string) (*FinishedMove, error) {
	rec, err := readRecord(record)
	if err != nil || rec == nil {
		return nil, err
	}
	head, err := BranchHead(ctx, root, rec.Branch)
	var noBranch *NoBranchError
	switch {
	case errors.As(err, &noBranch):
		return nil, removeRecord(record)
	case err != nil:
		return nil, err
	case head == rec.To || head != rec.From || CurrentBranch(ctx, root) != rec.Branch:
		return nil, removeRecord(record)
	}
	if _, err := RevParse(ctx, root, rec.To); err != nil {
		if status, serr := run(ctx, root, "status", "--porcelain", "-z", "--untracked-files=all"); serr != nil || status != "" {
			return nil, fmt.Errorf("%s records a fast-forward of %s to %s, a commit the repository does not have, and %s's checkout has changes", record, rec.Branch, short(rec.To), rec.Branch)
		}
		return nil, removeRecord(record)
	}
	if ok, err := IsAncestor(ctx, root, rec.From, rec.To); err != nil || !ok {
		return nil, fmt.Errorf("%s records a move of %s from %s to %s, which is no fast-forward", record, rec.Branch, short(rec.From), short(rec.To))
	}
	m, err := inspectMove(ctx, root, *rec)
	if err != nil {
		return nil, err
	}
	if len(m.unexplained) > 0 {
		return nil, &HalfMovedError{Root: root, FastForwardRecord: *rec, Paths: m.unexplained}
	}
	// The branch may not have moved since it was read above: the checkout
	// is written over only for a move that is still the one recorded.
	if head, err := BranchHead(ctx, root, rec.Branch); err != nil {
		return nil, err
	} else if head != rec.From {
		return nil, fmt.Errorf("refusing to finish the fast-forward of %s to %s: it moved to %s meanwhile", rec.Branch, short(rec.To), short(head))
	}
	if _, err := Run(ctx, root, "read-tree", "--reset", "-u", rec.To); err != nil {
		return nil, err
	}
	if _, err := Run(ctx, root, "update-ref", "-m", "set: fast-forward (finished after an interruption)", "refs/heads/"+rec.Branch, rec.To, rec.From); err != nil {
		return nil, err
	}
	return &FinishedMove{FastForwardRecord: *rec, Written: m.written}, removeRecord(record)
}

// writeRecord writes rec at path, durably, before the move it describes.
func writeRecord(path string, rec FastForwardRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o644)
}

// readRecord reads the record at path, or nil when there is none.
func readRecord(path string) (*FastForwardRecord, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec FastForwardRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rec.Branch == "" || !isObjectID(rec.From) || !isObjectID(rec.To) {
		return nil, fmt.Errorf("%s: not a fast-forward record (branch %q, from %q, to %q)", path, rec.Branch, rec.From, rec.To)
	}
	return &rec, nil
}

// removeRecord removes the record at path, which may be gone already.
func removeRecord(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// isObjectID reports whether s is a full SHA-1 or SHA-256 object ID.
func isObjectID(s string) bool {
	if len(s) != sha1.Size*2 && len(s) != sha256.Size*2 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// move is what the checkout of the root holds of a recorded move: the
// changed paths it explains (written), and the ones it does not.
type move struct {
	written, unexplained []string
}

// inspectMove sorts the paths of root's checkout that differ from HEAD,
// which must be rec.From. A path is explained when the move changes it
// and both its index entry and its file are absent or hold From's or To's
// content (a symbolic link holds its target's text; the executable bit is
// not compared, as no content is lost by it), or the file holds the start
// of To's content (git was writing it); an unmerged path never is. A
// submodule's checkout is not the move's to write: only its index entry
// counts. An explained path is what finishing the move writes over
// without losing anything that From or To does not have.
func inspectMove(ctx context.Context, root string, rec FastForwardRecord) (move, error) {
	changed, err := treeChanges(ctx, root, rec.From, rec.To)
	if err != nil {
		return move{}, err
	}
	out, err := run(ctx, root, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=none")
	if err != nil {
		return move{}, err
	}
	st, err := parseStatus(out)
	if err != nil {
		return move{}, err
	}
	files, err := worktreeBlobs(ctx, root, len(rec.From), changed, st)
	if err != nil {
		return move{}, err
	}
	var m move
	for _, p := range st.paths {
		v, ok := changed[p]
		explained := ok && !st.bad[p] && v.holds(st.index[p]) && (v.submodule || v.holds(files[p]))
		if explained {
			m.written = append(m.written, p)
		} else {
			m.unexplained = append(m.unexplained, p)
		}
	}
	return m, nil
}

// worktreeStatus is what `git status --porcelain=v2 -z` says of the
// worktree's paths.
type worktreeStatus struct {
	index map[string]string // path → blob ID in the index, "" when absent
	bad   map[string]bool   // paths no version explains whatever their content
	paths []string          // every path status names, sorted, once each
}

// parseStatus reads the output of `git status --porcelain=v2 -z
// --no-renames`: an ordinary entry's index blob, an untracked path, and an
// unmerged path or a rename, which no move explains.
func parseStatus(status string) (worktreeStatus, error) {
	st := worktreeStatus{index: map[string]string{}, bad: map[string]bool{}}
	fields := strings.Split(status, "\x00")
	for i := 0; i < len(fields); i++ {
		line := fields[i]
		var path string
		switch {
		case strings.HasPrefix(line, "1 "): // 1 XY sub mH mI mW hH hI path
			f := strings.SplitN(line, " ", 9)
			if len(f) != 9 {
				return worktreeStatus{}, fmt.Errorf("git status: unexpected line %q", line)
			}
			path = f[8]
			st.index[path] = blobOrAbsent(f[4], f[7])
		case strings.HasPrefix(line, "? "):
			path = line[2:]
			if _, ok := st.index[path]; !ok {
				st.index[path] = ""
			}
		case strings.HasPrefix(line, "u "): // unmerged: no move of set's leaves that
			f := strings.SplitN(line, " ", 11)
			path = f[len(f)-1]
			st.bad[path] = true
		case strings.HasPrefix(line, "2 "): // a rename, which --no-renames rules out
			f := strings.SplitN(line, " ", 10)
			path = f[len(f)-1]
			st.bad[path] = true
			if i+1 < len(fields) {
				i++
				st.bad[fields[i]] = true
				st.paths = append(st.paths, fields[i])
			}
		case line == "":
			continue
		default:
			return worktreeStatus{}, fmt.Errorf("git status: unexpected line %q", line)
		}
		if !slices.Contains(st.paths, path) {
			st.paths = append(st.paths, path)
		}
	}
	slices.Sort(st.paths)
	st.paths = slices.Compact(st.paths)
	return st, nil
}

// worktreeBlobs returns the blob ID of the file at each path of st that
// the move changes ("" when there is no file; a symbolic link's target
// hashed as a blob, with IDs of idLen hex digits), counting a file that
// holds the start of To's content as To's. A path whose file is neither a
// regular file, a link nor a directory is marked bad in st.
func worktreeBlobs(ctx context.Context, root string, idLen int, changed map[string]versions, st worktreeStatus) (map[string]string, error) {
	var toHash []string
	files := map[string]string{}
	for _, p := range st.paths {
		v, ok := changed[p]
		if !ok || st.bad[p] || v.submodule {
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(p))
		info, err := os.Lstat(full)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			files[p] = ""
		case err != nil:
			return nil, err
		case info.Mode().IsDir():
			files[p] = "" // a directory where the move has a file: no file there
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return nil, err
			}
			files[p] = blobID(idLen, []byte(target))
		case info.Mode().IsRegular():
			toHash = append(toHash, p)
		default:
			st.bad[p] = true // a device, a socket or a pipe: no version's content
		}
	}
	for chunk := range slices.Chunk(toHash, 256) {
		out, err := Run(ctx, root, append([]string{"hash-object", "--"}, chunk...)...)
		if err != nil {
			return nil, err
		}
		ids := strings.Split(out, "\n")
		if len(ids) != len(chunk) {
			return nil, fmt.Errorf("git hash-object gave %d IDs for %d files", len(ids), len(chunk))
		}
		for i, p := range chunk {
			files[p] = ids[i]
		}
	}

	// git writes a file from its start to its end: a file it was writing
	// when it was killed holds the start of To's content.
	for _, p := range toHash {
		if v := changed[p]; v.to != "" && !v.holds(files[p]) {
			partial, err := prefixOf(ctx, root, p, v.to)
			if err != nil {
				return nil, err
			}
			if partial {
				files[p] = v.to
			}
		}
	}
	return files, nil
}

// prefixOf reports whether the file at path in root holds the start of
// blob id's content, and less than all of it.
func prefixOf(ctx context.Context, root, path, id string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		return false, err
	}
	blob, err := run(ctx, root, "cat-file", "blob", id)
	if err != nil {
		return false, err
	}
	return len(data) < len(blob) && blob[:len(data)] == string(data), nil
}

// versions are a path's blob IDs in the two commits of a move, "" where
// the commit has no blob there.
type versions struct {
	from, to string
	// submodule: a commit has a submodule there.
	submodule bool
}

// holds reports whether id is one of the versions.
func (v versions) holds(id string) bool { return id == v.from || id == v.to }

// treeChanges are the paths that differ between commits from and to, with
// their versions.
func treeChanges(ctx context.Context, root, from, to string) (map[string]versions, error) {
	out, err := run(ctx, root, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", from, to)
	if err != nil {
		return nil, err
	}
	changes := map[string]versions{}
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		// :<mode from> <mode to> <id from> <id to> <status>, then the path
		f := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(f) != 5 {
			return nil, fmt.Errorf("git diff-tree: unexpected line %q", fields[i])
		}
		changes[fields[i+1]] = versions{
			from:      blobOrAbsent(f[0], f[2]),
			to:        blobOrAbsent(f[1], f[3]),
			submodule: f[0] == gitlinkMode || f[1] == gitlinkMode,
		}
	}
	return changes, nil
}

// gitlinkMode is the mode of a submodule's entry in a tree or the index.
const gitlinkMode = "160000"

// blobOrAbsent is id, or "" when mode says there is no entry.
func blobOrAbsent(mode, id string) string {
	if strings.Trim(mode, "0") == "" {
		return ""
	}
	return id
}

// blobID is the ID git gives a blob of data, in the repository's object
// format, told by the length of its IDs.
func blobID(idLen int, data []byte) string {
	var h hash.Hash = sha1.New()
	if idLen == sha256.Size*2 {
		h = sha256.New()
	}
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
