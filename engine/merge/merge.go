// Package merge integrates verified changes into main, one attempt at a
// time: Prepare merges a change onto main, or onto the candidate of the
// change ahead of it in the queue (speculation), and makes the candidate
// commit; Check runs the integration stack on its tree; Land moves main to
// it, or Reject sends the change back to its agent. main moves only by
// fast-forward, by exactly one commit per change, and only to a candidate
// whose integration stack passed on exactly its tree: the merged change
// with its OpenSpec delta folded into openspec/specs. The queue that calls
// it lands candidates in queue order, each onto the one before.
package merge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/gate"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm"
	"github.com/set-engine/set/engine/openspec"
	"github.com/set-engine/set/engine/plan"
	"github.com/set-engine/set/engine/redact"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/runner"
	"github.com/set-engine/set/engine/spec"
)

// Input is one change to integrate. Each engine package with one entry
// point names its argument Input (gate.Input, baseline.Input,
// coverage.Input): the package says whose input it is.
type Input struct {
	Project *config.Project
	// Layout is the run directory of the project (the user's checkout,
	// Layout.Root(), is where main moves).
	Layout   rundir.Layout
	Change   plan.Change
	Reqs     []spec.Requirement
	Steps    []graph.GateStep // the integration stack
	Worktree string
	// Removing and UserFolder are passed to the integration stack's gates
	// (see gate.Input).
	Removing   []string
	UserFolder bool
	// Head is the change's verified head (MERGE_QUEUED): every attempt
	// starts from it. "" for a journal that did not record it.
	Head string
	// Attempt numbers the change's integration attempt (1-based): it names
	// the attempt's events and gate logs.
	Attempt int
	Env     []string
	// Redact masks secrets in the gates' and the regeneration's logs
	// (nil: none are masked).
	Redact  *redact.Redactor
	Runners map[string]runner.Runner
	// Accepted are main's failures the run accepted, by gate (see
	// gate.Input.Accepted).
	Accepted map[string][]string
	// Models configures the model calls of the integration stack's
	// model-graded gates (see gate.StackInput.Models).
	Models *llm.Config
	// Emit records an event of the change.
	Emit func(journal.Payload) error
	// Now gives the archive date.
	Now func() time.Time
	// Delta, if set, gives the delta specs set writes for the change on
	// base, a commit of main or a candidate (paths in the change folder,
	// specs/<capability>/spec.md): the fold writes them over the folder's
	// specs/ first, so that the delta main gets is the one of the tree it
	// is integrated on; a ".openspec.yaml" among them (the delta of a
	// folder the project's people wrote) is written over the folder's too,
	// and with UserFolder the folder keeps none the delta lacks.
	// nil, or a nil answer, leaves the folder as the branch has it.
	Delta func(ctx context.Context, base string) (map[string][]byte, error)
	// Checkpoint, if set, is called just before main moves
	// ("before-fast-forward") and just after, before MERGED and ARCHIVED
	// are journaled ("fast-forwarded"); in push mode also just before the
	// push, once PUSHING is journaled ("before-push"), and just after it
	// ("pushed").
	Checkpoint func(point string)
}

// checkWorktree proves that in.Worktree is the change's worktree of the
// repository at in.Layout.Root(), on branch set/<change>, before git
// changes it (see git.CheckWorktree).
func (in Input) checkWorktree(ctx context.Context) error {
	return git.CheckWorktree(ctx, in.Layout.Root(), in.Worktree, git.ChangeBranch(in.Change.Name))
}

func (in Input) checkpoint(point string) {
	if in.Checkpoint != nil {
		in.Checkpoint(point)
	}
}

// Outcome of an integration (proc.Outcome is how a process ended,
// another thing).
type Outcome struct {
	// Merged is set when main moved to the change; Commit is main then.
	Merged bool
	Commit string
	// Failed is set when the change goes back to its agent: a real conflict
	// (left in progress in the worktree) or a failed integration gate.
	Failed       bool
	Reason       string // journal.ReasonConflict or journal.ReasonGate
	RetryContext string
	// Gate is the integration gate that failed (Reason "gate").
	Gate string
	// ConflictsAhead lists the files in which the change conflicts with
	// the changes ahead of it that main does not hold yet (Onto.Ahead):
	// not the change's fault until they are on main. Nothing was
	// recorded; the worktree is back at the change's verified head.
	ConflictsAhead []string
}

// Onto is what an integration attempt merges the change onto: main, or
// the candidate of the attempt ahead of it in the merge queue.
type Onto struct {
	// Commit is main's head when Ahead is empty, else the candidate of the
	// last change of Ahead.
	Commit string
	// Ahead are the changes, in queue order, whose candidates Commit holds
	// and main does not hold yet; empty when Commit is main.
	Ahead []string
}

// Candidate is a prepared integration attempt: the one commit main takes
// for the change when the integration stack passes on its tree.
type Candidate struct {
	Onto Onto
	// Commit has exactly the tree the integration stack checks (the
	// merge with the fold), and Onto.Commit as its only parent, so that
	// main moving to it is a fast-forward and main's history stays linear.
	Commit string
	// merged is the merge without the fold: where a change whose gate
	// failed goes back to, for its agent to build on.
	merged   string
	archived journal.ArchivedData
	// head is the worktree's HEAD that Commit's tree is the tree of (the
	// fold, or the merge when nothing folded): while HEAD is there, the
	// gates committed nothing. "" when unknown.
	head string
	// unioned are the append-only files whose conflicts the merge
	// resolved as a union (see unionConflicts); MERGED names them.
	unioned []string
}

// Prepare merges onto.Commit into the change's branch, starting from the
// change's verified head (in.Head), resolves conflicts in append-only
// files as a union (see unionConflicts) and conflicts confined to
// generated files by regenerating them, folds the change's OpenSpec delta
// into the merged tree (see fold), and makes the candidate commit, which
// it journals as INTEGRATION_ATTEMPT. A conflict is the change's failure
// (CHANGE_INTEGRATION_FAILED, the merge left in progress for its agent)
// only when onto is main; onto a candidate, it is Outcome.ConflictsAhead,
// for the queue to try again once the changes ahead are on main. A
// returned error is a run error (git or the disk failed), never the
// change's fault.
func Prepare(ctx context.Context, in Input, onto Onto) (Candidate, Outcome, error) {
	if err := in.checkWorktree(ctx); err != nil {
		return Candidate{}, Outcome{}, err
	}
	if err := startOver(ctx, in); err != nil {
		return Candidate{}, Outcome{}, err
	}
	if err := in.Emit(journal.IntegrationAttemptData{Attempt: in.Attempt, Onto: onto.Commit, Ahead: onto.Ahead}); err != nil {
		return Candidate{}, Outcome{}, err
	}
	// Onto main, merge the branch by name, not by commit: conflict
	// markers then read ">>>>>>> main", the same in every run. The queue
	// is the only mover of main, so the name still means onto.Commit.
	rev, label := in.Project.MainBranch, in.Project.MainBranch
	if len(onto.Ahead) > 0 {
		rev, label = onto.Commit, in.Project.MainBranch+" with "+strings.Join(onto.Ahead, ", ")
	}
	res, err := git.Merge(ctx, in.Worktree, rev, fmt.Sprintf("Merge %s into %s", label, in.Change.Name))
	if err != nil {
		return Candidate{}, Outcome{}, err
	}
	var unioned []string
	if !res.Clean {
		// Append-only files first: what they resolve is no conflict.
		if unioned, res.Conflicts, err = unionConflicts(ctx, in, res.Conflicts); err != nil {
			return Candidate{}, Outcome{}, err
		}
		if len(res.Conflicts) == 0 {
			if err := concludeUnion(ctx, in, label, unioned); err != nil {
				return Candidate{}, Outcome{}, err
			}
		}
	}
	if len(res.Conflicts) > 0 {
		if real := in.realConflicts(res.Conflicts); len(real) > 0 && len(onto.Ahead) > 0 {
			if err := startOver(ctx, in); err != nil {
				return Candidate{}, Outcome{}, err
			}
			return Candidate{}, Outcome{ConflictsAhead: real}, nil
		}
		out, err := resolveConflicts(ctx, in, res.Conflicts)
		if err != nil || out.Failed {
			return Candidate{}, out, err
		}
	}
	merged, err := git.RevParse(ctx, in.Worktree, "HEAD")
	if err != nil {
		return Candidate{}, Outcome{}, err
	}
	archived, head, err := fold(ctx, in, onto.Commit)
	if err != nil {
		return Candidate{}, Outcome{}, err
	}
	if head == "" { // nothing folded: the merge is the tree
		if head, err = git.RevParse(ctx, in.Worktree, "HEAD"); err != nil {
			return Candidate{}, Outcome{}, err
		}
	}
	commit, err := git.CommitTree(ctx, in.Worktree, head+"^{tree}", onto.Commit, squashMessage(in))
	if err != nil {
		return Candidate{}, Outcome{}, err
	}
	return Candidate{Onto: onto, Commit: commit, merged: merged, archived: archived, head: head, unioned: unioned}, Outcome{}, nil
}

// startOver puts the worktree back at the change's verified head, clean:
// what an earlier attempt left (a merge in progress, a merge onto a
// candidate main never took, a fold, build outputs) goes. The
// integration stack tests exactly the committed tree.
func startOver(ctx context.Context, in Input) error {
	if git.InMerge(ctx, in.Worktree) {
		if err := git.AbortMerge(ctx, in.Worktree); err != nil {
			return err
		}
	}
	if in.Head != "" {
		// At the verified head already (a first attempt), Clean alone
		// discards what is not committed.
		if git.Head(ctx, in.Worktree) != in.Head {
			if err := git.ResetHard(ctx, in.Worktree, in.Head); err != nil {
				return err
			}
		}
	} else if err := dropFold(ctx, in); err != nil {
		// A journal from before MERGE_QUEUED was projected: a fold
		// committed by an integration that stopped before main moved is
		// not the change's work.
		return err
	}
	return git.Clean(ctx, in.Worktree)
}

// Check runs the integration stack on the candidate's tree. A blocking
// failure is returned as a failed Outcome (Reason "gate") and changes
// nothing: whether it is the change's failure depends on the changes
// ahead of it (see Reject). A returned error is a run error, or ctx's
// cause when ctx ended while a gate ran.
func Check(ctx context.Context, in Input, cand Candidate) (Outcome, error) {
	stack, err := gate.RunStack(ctx, gate.StackInput{
		Project: in.Project, Change: in.Change, Reqs: in.Reqs, Removing: in.Removing, UserFolder: in.UserFolder, Stage: graph.StageIntegration, Attempt: in.Attempt,
		Layout: in.Layout, Worktree: in.Worktree, Base: cand.Onto.Commit, Env: in.Env, Redact: in.Redact,
		Steps: in.Steps, Accepted: in.Accepted, Runners: in.Runners, Models: in.Models,
		AfterGate: func(ctx context.Context, r gate.Result) (string, error) {
			// main gets the committed tree; a gate that edited it would
			// have tested something else.
			changed, err := git.Dirty(ctx, in.Worktree)
			if err != nil || len(changed) == 0 {
				return "", err
			}
			return fmt.Sprintf("The integration gate %s changed files of the tree it checks (%s); gates must leave the tree as committed. Commit what it would change.", r.Gate, strings.Join(changed, ", ")), nil
		},
	}, in.Emit)
	if err != nil {
		return Outcome{}, err
	}
	// The gates ran the change's code in the worktree; before git resets
	// it or takes its tree for main, it must still be the worktree, at
	// the candidate's tree.
	if err := in.checkWorktree(ctx); err != nil {
		return Outcome{}, err
	}
	mainBranch := in.Project.MainBranch
	switch {
	case stack.Interrupted:
		return Outcome{}, context.Cause(ctx)
	case stack.Rejection != "":
		return Outcome{Failed: true, Reason: journal.ReasonGate, Gate: stack.Blocking.Gate, RetryContext: stack.Rejection}, nil
	case stack.Blocking != nil:
		return Outcome{Failed: true, Reason: journal.ReasonGate, Gate: stack.Blocking.Gate, RetryContext: fmt.Sprintf("After merging %s into your branch, the integration gate %s failed.\n%s%s", mainBranch, stack.Blocking.Gate, unionNote(cand.unioned, mainBranch), stack.Blocking.RetryContext)}, nil
	}
	if cand.head != "" && git.Head(ctx, in.Worktree) == cand.head {
		return Outcome{}, nil // HEAD has the candidate's tree still
	}
	same, err := git.SameTree(ctx, in.Worktree, "HEAD", cand.Commit)
	if err != nil {
		return Outcome{}, err
	}
	if !same {
		return Outcome{Failed: true, Reason: journal.ReasonGate, Gate: in.Steps[len(in.Steps)-1].Gate,
			RetryContext: "The integration gates committed to your branch while they ran; gates must leave the tree as committed."}, nil
	}
	return Outcome{}, nil
}

// Land moves main to the candidate, by fast-forward from cand.Onto.Commit
// (which main must be), and journals MERGED and ARCHIVED together; both
// name the candidate. Its stack passed (Check) on exactly its tree.
//
// In push mode (project.delivery) the remote's main moves first: PUSHING
// records the intent, then the candidate is pushed to it without force,
// and only once the remote took it does the local main follow. A remote
// whose main moved refuses the push: Land returns the
// *git.PushRejectedError, main has not moved, and the change is to be
// integrated again onto the remote's new main (the queue does so).
func Land(ctx context.Context, in Input, cand Candidate) (Outcome, error) {
	if dl := in.Project.Delivery; dl.Pushes() {
		if err := in.Emit(journal.PushingData{Remote: dl.Remote, Commit: cand.Commit, Previous: cand.Onto.Commit, Attempt: in.Attempt}); err != nil {
			return Outcome{}, err
		}
		in.checkpoint("before-push")
		if err := git.PushFastForward(context.WithoutCancel(ctx), in.Layout.Root(), dl.Remote, in.Project.MainBranch, cand.Commit, cand.Onto.Commit, git.RemoteTimeout); err != nil {
			return Outcome{}, err
		}
		in.checkpoint("pushed")
	}
	in.checkpoint("before-fast-forward")
	// Moving main's checkout is not atomic: the record lets a run killed
	// half-way through it finish it on resume. A Ctrl-C does not stop it
	// half-way: it takes milliseconds, and the run stops after it.
	if err := git.FastForward(context.WithoutCancel(ctx), in.Layout.Root(), in.Project.MainBranch, cand.Onto.Commit, cand.Commit, in.Layout.FastForward()); err != nil {
		return Outcome{}, err
	}
	in.checkpoint("fast-forwarded")
	if err := in.Emit(journal.MergedData{Commit: cand.Commit, Previous: cand.Onto.Commit, Attempt: in.Attempt, Union: cand.unioned}); err != nil {
		return Outcome{}, err
	}
	archived := cand.archived
	archived.Commit = cand.Commit
	if err := in.Emit(archived); err != nil {
		return Outcome{}, err
	}
	return Outcome{Merged: true, Commit: cand.Commit}, nil
}

// Reject sends the change back to its agent after its integration stack
// failed (out, from Check) on main and the changes ahead of it, all on
// main now: the branch goes back to the merge, without the fold, so that
// the agent works on its change and its delta, never on an archive; the
// merge stays for the agent to build on. CHANGE_INTEGRATION_FAILED records
// why.
func Reject(ctx context.Context, in Input, cand Candidate, out Outcome) (Outcome, error) {
	if err := resetKeep(ctx, in.Worktree, cand.merged); err != nil {
		return Outcome{}, err
	}
	if err := in.Emit(journal.ChangeIntegrationFailedData{Reason: journal.ReasonGate, Gate: out.Gate, RetryContext: out.RetryContext, Attempt: in.Attempt}); err != nil {
		return Outcome{}, err
	}
	return out, nil
}

// resetKeep moves the worktree's branch to commit, keeping uncommitted
// edits where the move does not touch them (git reset --keep), and
// discarding them where it does.
func resetKeep(ctx context.Context, worktree, commit string) error {
	if err := git.ResetKeep(ctx, worktree, commit); err == nil {
		return nil
	}
	return git.ResetHard(ctx, worktree, commit)
}

// Trailers that identify set's commits, so that a restarted run recognises
// work that got further than its journal says.
const (
	// ChangeTrailer ("Set-Change: <change>") ends the change's one commit
	// on main.
	ChangeTrailer = "Set-Change"
	// ArchiveTrailer ("Set-Archive: <change>") ends the fold commit on the
	// change's branch; it never reaches main's history, only main's tree.
	ArchiveTrailer = "Set-Archive"
)

// fold folds the change's OpenSpec delta, written for base first (see
// Input.Delta), into the merged tree in the
// worktree (openspec/changes/<change> folded into openspec/specs/ and
// moved under openspec/changes/archive/, see openspec.ArchiveChange) and
// commits that on the branch with the ArchiveTrailer, so that the
// integration stack runs on the tree main gets. It returns the ARCHIVED
// record (without its commit, which main does not have yet) and the fold
// commit ("" when nothing was folded). A change
// without a delta, or whose delta does not fold onto main's specs, is
// integrated as it is, and the record says why nothing was folded: its
// code is good, and a delta left in openspec/changes/ is for a person to
// fix.
func fold(ctx context.Context, in Input, base string) (_ journal.ArchivedData, commit string, _ error) {
	if err := in.writeDelta(ctx, base); err != nil {
		return journal.ArchivedData{}, "", err
	}
	res, err := openspec.ArchiveChange(in.Worktree, in.Change.Name, in.Now())
	if errors.Is(err, openspec.ErrNoDelta) {
		return journal.ArchivedData{Skipped: noDelta(in.Change.Name)}, "", nil
	}
	if err != nil {
		// ArchiveChange undid its writes; Clean makes sure of it.
		if cerr := git.Clean(ctx, in.Worktree); cerr != nil {
			return journal.ArchivedData{}, "", cerr
		}
		return journal.ArchivedData{Skipped: notFolded(in.Change.Name) + ": " + err.Error()}, "", nil
	}
	var did []string
	if len(res.Capabilities) > 0 {
		did = append(did, fmt.Sprintf("update openspec/specs (%s)", strings.Join(res.Capabilities, ", ")))
	}
	if len(res.Retired) > 0 {
		did = append(did, fmt.Sprintf("retire %s", strings.Join(res.Retired, ", ")))
	}
	subject := strings.Join(did, "; ")
	if subject == "" {
		subject = "move the change folder to " + res.ArchiveDir
	}
	msg := fmt.Sprintf("Archive %s: %s\n\n%s: %s\n", in.Change.Name, subject, ArchiveTrailer, in.Change.Name)
	// The fold writes under openspec/ only, onto a worktree whose index
	// is its HEAD (the merge is committed, startOver cleaned the rest).
	commit, err = git.CommitOnHead(ctx, in.Worktree, msg, "openspec")
	if err != nil {
		return journal.ArchivedData{}, "", err
	}
	return journal.ArchivedData{Capabilities: res.Capabilities, ArchiveDir: res.ArchiveDir}, commit, nil
}

// writeDelta writes the delta specs set writes on base (Input.Delta) over
// those of the change folder in the worktree, when it has a folder. A
// folder the rewrite refuses (openspec.RefusedPathError: a link in it)
// is left for the fold, which refuses it too and says why; any other
// failure to write is an error, never a fold of the stale delta.
func (in Input) writeDelta(ctx context.Context, base string) error {
	if in.Delta == nil {
		return nil
	}
	files, err := in.Delta(ctx, base)
	if err != nil || files == nil {
		return err
	}
	dir := filepath.Join(in.Worktree, filepath.FromSlash(spec.ChangeDir(in.Change.Name)))
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	err = spec.WriteDeltaSpecs(in.Worktree, in.Change.Name, files)
	if data, ok := files[gate.MetadataFile]; (ok || in.UserFolder) && err == nil {
		err = writeMetadata(in.Worktree, in.Change.Name, data, ok)
	}
	var refused *openspec.RefusedPathError
	if errors.As(err, &refused) {
		return git.Clean(ctx, in.Worktree)
	}
	return err // any other failure is the run's: folding the old delta would put it on main
}

// writeMetadata writes the .openspec.yaml of a change folder the
// project's people wrote, as the delta has it (Input.Delta), or removes
// it when the delta has none (ok false: one the agent added would steer
// the archive), refusing a symbolic link on the way as WriteDeltaSpecs
// does.
func writeMetadata(root, change string, data []byte, ok bool) error {
	rel := spec.ChangeDir(change) + "/" + gate.MetadataFile
	if err := openspec.CheckNoLinks(root, rel); err != nil {
		return err
	}
	path := filepath.Join(root, filepath.FromSlash(rel))
	if !ok {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return os.WriteFile(path, data, 0o644)
}

// dropFold removes the fold commit an interrupted integration left at the
// tip of the change's branch.
func dropFold(ctx context.Context, in Input) error {
	folded, err := git.TrailerValue(ctx, in.Worktree, "HEAD", ArchiveTrailer)
	if err != nil || folded != in.Change.Name {
		return err
	}
	return git.ResetHard(ctx, in.Worktree, "HEAD^")
}

// The reasons an ARCHIVED record gives for folding nothing.
func noDelta(change string) string {
	return "no OpenSpec delta (openspec/changes/" + change + ")"
}

func notFolded(change string) string {
	return "the OpenSpec delta does not fold, left in openspec/changes/" + change
}

// Archived reads the ARCHIVED record of a change back from its commit on
// main, for a run that stopped after main moved but before it journaled
// it: the capabilities whose living spec the commit changed and whose
// delta it archived, and the archive directory it added. The reason a
// delta did not fold is not in the commit; the record says only that it
// did not.
func Archived(ctx context.Context, root, change, commit string) (journal.ArchivedData, error) {
	entries, err := git.CommitChanges(ctx, root, commit, "openspec/")
	if err != nil {
		return journal.ArchivedData{}, err
	}
	archiveDir := ""
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Path, archiveRoot)
		if dir, _, _ := strings.Cut(rest, "/"); ok && e.Status == 'A' && archivedAs(dir, change) {
			archiveDir = archiveRoot + dir
		}
	}
	if archiveDir == "" {
		left, err := git.HasPath(ctx, root, commit, "openspec/changes/"+change)
		if err != nil {
			return journal.ArchivedData{}, err
		}
		if left {
			return journal.ArchivedData{Commit: commit, Skipped: notFolded(change)}, nil
		}
		return journal.ArchivedData{Commit: commit, Skipped: noDelta(change)}, nil
	}
	added := map[string]bool{}
	for _, e := range entries {
		if e.Status == 'A' {
			added[e.Path] = true
		}
	}
	d := journal.ArchivedData{Commit: commit, ArchiveDir: archiveDir}
	for _, e := range entries { // sorted by path
		rest, ok := strings.CutPrefix(e.Path, "openspec/specs/")
		// A capability may nest: openspec/specs/search/full-text/spec.md.
		capability, isSpec := strings.CutSuffix(rest, "/spec.md")
		if ok && isSpec && e.Status != 'D' && added[archiveDir+"/specs/"+capability+"/spec.md"] {
			d.Capabilities = append(d.Capabilities, capability)
		}
	}
	slices.Sort(d.Capabilities)
	return d, nil
}

// archiveRoot holds the archived change folders, each named
// <yyyy-mm-dd>-<change>.
const archiveRoot = "openspec/changes/archive/"

// archivedAs reports whether dir is the name openspec.ArchiveChange gives the
// archived folder of change (see openspec.ArchiveName).
func archivedAs(dir, change string) bool { return openspec.ArchivedAs(dir, change) }

// squashMessage is the message of a change's commit on main.
func squashMessage(in Input) string {
	var b strings.Builder
	title := in.Change.Description
	if title == "" {
		titles := make([]string, len(in.Reqs))
		for i, r := range in.Reqs {
			titles[i] = r.Title
		}
		title = strings.Join(titles, "; ")
	}
	if r := []rune(title); len(r) > 72 {
		title = string(r[:69]) + "..."
	}
	fmt.Fprintf(&b, "%s: %s\n\n", in.Change.Name, title)
	for _, r := range in.Reqs {
		fmt.Fprintf(&b, "- %s: %s\n", r.ID, r.Title)
	}
	fmt.Fprintf(&b, "\n%s: %s\n", ChangeTrailer, in.Change.Name)
	return b.String()
}

// realConflicts are the paths of conflicts that regenerating generated
// files does not resolve.
func (in Input) realConflicts(paths []string) []string {
	var real []string
	for _, p := range paths {
		if _, ok := in.Project.Generated[p]; !ok {
			real = append(real, p)
		}
	}
	return real
}

// resolveConflicts regenerates the files of a conflict that touches only
// generated files and concludes the merge; any other conflict is left in
// progress for the agent, with the conflicting hunks as retry context.
func resolveConflicts(ctx context.Context, in Input, paths []string) (Outcome, error) {
	real := in.realConflicts(paths)
	if len(real) == 0 {
		regen := map[string]config.Generated{}
		for _, p := range paths {
			regen[p] = in.Project.Generated[p]
		}
		if err := regenerate(ctx, in, regen); err != nil {
			return Outcome{}, err
		}
		if err := in.checkWorktree(ctx); err != nil { // the generators ran there
			return Outcome{}, err
		}
		if _, err := git.CommitAll(ctx, in.Worktree, fmt.Sprintf("Merge %s into %s (regenerated %s)",
			in.Project.MainBranch, in.Change.Name, strings.Join(slices.Sorted(maps.Keys(regen)), ", "))); err != nil {
			return Outcome{}, err
		}
		return Outcome{}, nil
	}
	sources, err := conflictSources(ctx, in.Worktree, real)
	if err != nil {
		return Outcome{}, err
	}
	rc := conflictContext(in.Worktree, in.Project.MainBranch, real, describeSources(in.Project.MainBranch, sources))
	if err := in.Emit(journal.ChangeIntegrationFailedData{
		Reason: journal.ReasonConflict, Paths: real, RetryContext: rc, Attempt: in.Attempt,
	}); err != nil {
		return Outcome{}, err
	}
	return Outcome{Failed: true, Reason: journal.ReasonConflict, RetryContext: rc}, nil
}

// regenerate takes main's side of each generated file and then runs each
// distinct regeneration command once, in the worktree.
func regenerate(ctx context.Context, in Input, regen map[string]config.Generated) error {
	paths := slices.Sorted(maps.Keys(regen))
	// Every file first takes main's side; only then do the commands run,
	// so that one command rebuilding several files keeps all its output.
	for _, path := range paths {
		if err := git.CheckoutTheirs(ctx, in.Worktree, path); err != nil {
			return err
		}
	}
	// One run per distinct command and runner; a container runner copies
	// back every file that run rebuilds.
	type job struct {
		argv   []string
		runner string
		paths  []string
	}
	var jobs []*job
	byKey := map[string]*job{}
	for _, path := range paths {
		g := regen[path]
		r := g.Runner
		if r == "" {
			r = in.Project.Runner.Kind
		}
		key := r + "\x00" + strings.Join(g.Regenerate, "\x00")
		if byKey[key] == nil {
			byKey[key] = &job{argv: g.Regenerate, runner: r}
			jobs = append(jobs, byKey[key])
		}
		byKey[key].paths = append(byKey[key].paths, path)
	}
	logPath, _ := in.Layout.RegenerateLog(in.Change.Name, in.Attempt)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	logw := in.Redact.Writer(log)
	defer logw.Close()
	for _, j := range jobs {
		r := in.Runners[j.runner]
		if r == nil {
			return fmt.Errorf("regenerating %s: no %q runner", strings.Join(j.paths, ", "), j.runner)
		}
		res, err := r.Exec(ctx, runner.Exec{Argv: j.argv, Dir: in.Worktree, Env: regenerateEnv(in), Export: j.paths, Timeout: regenerateTimeout, Log: logw})
		if err != nil {
			return fmt.Errorf("regenerating %s: %w", strings.Join(j.paths, ", "), err)
		}
		if res.TimedOut || res.ExitCode != 0 {
			return fmt.Errorf("regenerating %s: `%s` exited %d (log: %s)", strings.Join(j.paths, ", "), strings.Join(j.argv, " "), res.ExitCode, logPath)
		}
	}
	return nil
}

// regenerateTimeout bounds one regeneration command.
const regenerateTimeout = 10 * time.Minute

// conflictContext tells the agent which files conflict and who else
// changed them (sources, see describeSources), and shows their
// conflicting hunks (capped), so it can resolve the merge in place.
func conflictContext(worktree, mainBranch string, paths []string, sources string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Merging %s into your branch conflicts in %d file(s): %s.\n", mainBranch, len(paths), strings.Join(paths, ", "))
	b.WriteString(sources)
	b.WriteString("The merge is in progress in your worktree. Resolve every conflict marker (<<<<<<<, =======, >>>>>>>) ")
	fmt.Fprintf(&b, "so that both your change and the work already on %s are kept, make the tests pass, and commit (or leave the files for set to commit). Do not abort the merge.\n", mainBranch)
	const maxBytes = 12 << 10
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(worktree, filepath.FromSlash(p)))
		if err != nil {
			fmt.Fprintf(&b, "\n%s: %v\n", p, err)
			continue
		}
		for _, h := range conflictHunks(string(data)) {
			if b.Len()+len(h.text) > maxBytes {
				b.WriteString("\n(more conflicts not shown)\n")
				return b.String()
			}
			fmt.Fprintf(&b, "\n%s:%d:\n```\n%s```\n", p, h.line, h.text)
		}
	}
	return b.String()
}

type hunk struct {
	line int
	text string
}

// conflictHunks extracts the marker-delimited regions of a file.
func conflictHunks(content string) []hunk {
	var out []hunk
	var cur *strings.Builder
	start := 0
	for i, line := range strings.SplitAfter(content, "\n") {
		switch {
		case strings.HasPrefix(line, "<<<<<<< "):
			cur = &strings.Builder{}
			start = i + 1
			cur.WriteString(line)
		case cur != nil:
			cur.WriteString(line)
			if strings.HasPrefix(line, ">>>>>>> ") {
				out = append(out, hunk{line: start, text: cur.String()})
				cur = nil
			}
		}
	}
	return out
}

// regenerateEnv is the environment of a regeneration: what an exec gate
// on the host would see of in.Env (nil: set's own), gate.HostEnv.
func regenerateEnv(in Input) []string {
	env := in.Env
	if env == nil {
		env = os.Environ()
	}
	return gate.HostEnv(env, in.Project.Passed())
}
