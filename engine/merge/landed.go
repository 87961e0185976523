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
	// <title>" line each (see squashMessage).
	Requirements []string
}

// requirementLine is a line of squashMessage that names a requirement.
var requirementLine = regexp.MustCompile(`^- (REQ-[A-Z0-9-]+): `)

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
		l := Landed{Commit: c.ID}
		for _, line := range strings.Split(c.Message, "\n") {
			if name, ok := strings.CutPrefix(line, ChangeTrailer+": "); ok {
				l.Change = strings.TrimSpace(name)
			}
			if m := requirementLine.FindStringSubmatch(line); m != nil && spec.IDPattern.MatchString(m[1]) {
				l.Requirements = append(l.Requirements, m[1])
			}
		}
		if l.Change != "" {
			out = append(out, l)
		}
	}
	return out, nil
}
