package merge

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/state"
)

// Landed is a change whose one commit is on main.
type Landed struct {
	Change string
	Commit string
	// Requirements are the IDs its commit message lists, one "- <ID>:
	// <title>" line each (see squashMessage), and Titles their titles
	// there, by ID.
	Requirements []string
	Titles       map[string]string
	// Title is what its message's subject says the change is for (the
	// plan's description, or its requirements' titles).
	Title string
}

// requirementLine is a line of squashMessage that names a requirement.
var requirementLine = regexp.MustCompile(`^- (REQ-[A-Z0-9-]+): (.*)$`)

// LandedOn returns the changes whose commit is on the first-parent
// history of rev, newest first; with main's living specs they are the
// record of what main implements. A change is found by its commit's
// ChangeTrailer, or, for a commit a forge made without it (a merge
// queue's squash, a merge whose message someone edited), by the journal
// of root's run: its MERGED event in pull-request mode names the forge's
// commit (see forgeMerged).
func LandedOn(ctx context.Context, root, rev string) ([]Landed, error) {
	commits, err := git.Log(ctx, root, rev, "^"+ChangeTrailer+": ")
	if err != nil {
		return nil, err
	}
	byCommit := map[string]Landed{}
	var out []Landed
	for _, c := range commits {
		if l, ok := landedBy(c); ok {
			out = append(out, l)
			byCommit[l.Commit] = l
		}
	}
	journaled, err := forgeMerged(root)
	if err != nil || len(journaled) == 0 {
		return out, err
	}
	for id, l := range journaled {
		if _, ok := byCommit[id]; !ok {
			byCommit[id] = l
		}
	}
	ids, err := git.FirstParents(ctx, root, rev)
	if err != nil {
		return nil, err
	}
	out = out[:0]
	for _, id := range ids {
		if l, ok := byCommit[id]; ok {
			out = append(out, l)
		}
	}
	return out, nil
}

// forgeMerged are the changes of root's run that a forge merged
// (pull-request mode), by the commit it made on main, as their MERGED
// events say, with the requirements of their plan.
func forgeMerged(root string) (map[string]Landed, error) {
	st, err := state.Read(rundir.New(root).Dir())
	if err != nil {
		return nil, err
	}
	out := map[string]Landed{}
	for name, c := range st.Changes {
		if c.PullRequest == nil || c.MergedCommit == "" || (c.Status != state.Merged && c.Status != state.Archived) {
			continue
		}
		out[c.MergedCommit] = Landed{Change: name, Commit: c.MergedCommit, Requirements: slices.Clone(c.Requirements)}
	}
	return out, nil
}

// landedBy reads the change a commit of main's history landed, from its
// message; ok is false for a commit set did not make (no ChangeTrailer).
func landedBy(c git.Commit) (_ Landed, ok bool) {
	l := Landed{Commit: c.ID}
	lines := strings.Split(c.Message, "\n")
	for _, line := range lines {
		if name, ok := strings.CutPrefix(line, ChangeTrailer+": "); ok {
			l.Change = strings.TrimSpace(name)
		}
		if m := requirementLine.FindStringSubmatch(line); m != nil && spec.IDPattern.MatchString(m[1]) {
			l.Requirements = append(l.Requirements, m[1])
			if l.Titles == nil {
				l.Titles = map[string]string{}
			}
			l.Titles[m[1]] = strings.TrimSpace(m[2])
		}
	}
	if l.Change == "" {
		return Landed{}, false
	}
	if _, title, ok := strings.Cut(lines[0], ": "); ok && strings.HasPrefix(lines[0], l.Change+": ") {
		l.Title = strings.TrimSpace(title)
	}
	return l, true
}
