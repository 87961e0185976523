package merge

import (
	"context"
	"regexp"
	"strings"

	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/spec"
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
// history of rev, found by their ChangeTrailer, newest first; with main's
// living specs they are the record of what main implements.
func LandedOn(ctx context.Context, root, rev string) ([]Landed, error) {
	commits, err := git.Log(ctx, root, rev, "^"+ChangeTrailer+": ")
	if err != nil {
		return nil, err
	}
	var out []Landed
	for _, c := range commits {
		if l, ok := landedBy(c); ok {
			out = append(out, l)
		}
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
