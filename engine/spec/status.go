package spec

import (
	"fmt"
	"slices"

	"github.com/set-engine/set/engine/english"
)

// Status says how a requirement of the spec stands against the living
// specs on main, the record of what main implements.
type Status string

const (
	// Implemented: the living specs hold the requirement with the same
	// title, text and scenarios, as a reader reads them (Content.AsRead):
	// re-wrapping a paragraph changes no requirement.
	Implemented Status = "implemented"
	// New: the living specs do not hold it.
	New Status = "new"
	// Changed: the living specs hold it, with another title, text or
	// scenarios.
	Changed Status = "changed"
	// Removed: the living specs hold it and the spec no longer does.
	Removed Status = "removed"
)

// Pending reports whether a requirement of this status is work to plan:
// new, changed or removed.
func (s Status) Pending() bool { return s == New || s == Changed || s == Removed }

// Standing is where one requirement stands against the living specs.
type Standing struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
	// Capability is the living spec the requirement is in or goes to:
	// openspec/specs/<capability>/spec.md. A new requirement goes where
	// the living specs keep the requirements of its domain, else to the
	// capability named by its domain.
	Capability string `json:"capability"`
	// Living is the requirement's name in the living spec ("REQ-LINKS-01:
	// Create a short link"), as written there; "" when it is new.
	Living string `json:"living,omitempty"`
	// Differs lists what a changed requirement changed: "title", "text",
	// "scenarios", in that order.
	Differs []string `json:"differs,omitempty"`
	// Dropped names the scenarios of the living requirement that a
	// changed one no longer has (one name per scenario, so a name the
	// living spec has twice may appear twice). OpenSpec refuses a
	// MODIFIED requirement that drops a scenario (see DropWarning).
	Dropped []string `json:"dropped,omitempty"`
}

// DropWarning says why the delta of a changed requirement that drops
// scenarios (st.Dropped) will not pass `openspec validate` nor fold as
// `openspec archive` folds, and what to do; "" when it drops none.
func DropWarning(st Standing) string {
	if len(st.Dropped) == 0 {
		return ""
	}
	names := make([]string, len(st.Dropped))
	for i, n := range st.Dropped {
		names[i] = fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("%s drops %s that openspec/specs/%s/spec.md has; OpenSpec refuses a MODIFIED requirement that drops a scenario, so the delta set writes for it will not fold: keep the scenario under its name, or take it out of openspec/specs/%s/spec.md in a commit of its own first",
		st.ID, english.Plural(len(names), "scenario")+" "+english.List(names), st.Capability, st.Capability)
}

// Compare gives every requirement of the spec, then every requirement the
// living specs hold and the spec no longer does, its Standing: the spec's
// in their order, the removed ones in the order of living. Requirements
// are matched by ID and compared by Content as a reader reads it
// (Content.AsRead), so that a change of spacing alone plans nothing.
func Compare(reqs []Requirement, living []LivingRequirement) []Standing {
	byID := map[string]LivingRequirement{}
	domainCapability := map[string]string{}
	for _, l := range living {
		byID[l.ID] = l
		if _, ok := domainCapability[l.Domain]; !ok {
			domainCapability[l.Domain] = l.Capability
		}
	}
	inSpec := map[string]bool{}
	out := make([]Standing, 0, len(reqs))
	for _, r := range reqs {
		inSpec[r.ID] = true
		l, ok := byID[r.ID]
		if !ok {
			capability := domainCapability[r.Domain]
			if capability == "" {
				capability = r.Domain
			}
			out = append(out, Standing{ID: r.ID, Status: New, Capability: capability})
			continue
		}
		st := Standing{ID: r.ID, Status: Implemented, Capability: l.Capability, Living: l.Name}
		st.Differs = Differs(r, l.Requirement)
		if slices.Contains(st.Differs, "scenarios") {
			st.Dropped = dropped(ContentOf(l.Requirement).AsRead().Scenarios, ContentOf(r).AsRead().Scenarios)
		}
		if len(st.Differs) > 0 {
			st.Status = Changed
		}
		out = append(out, st)
	}
	for _, l := range living {
		if !inSpec[l.ID] {
			out = append(out, Standing{ID: l.ID, Status: Removed, Capability: l.Capability, Living: l.Name})
		}
	}
	return out
}

// dropped returns the names of the scenarios of living that next does not
// have, counting each name as often as it appears.
func dropped(living, next []Scenario) []string {
	left := map[string]int{}
	for _, s := range next {
		left[s.Name]++
	}
	var out []string
	for _, s := range living {
		if left[s.Name] > 0 {
			left[s.Name]--
			continue
		}
		out = append(out, s.Name)
	}
	return out
}

func sameScenario(a, b Scenario) bool {
	return a.Name == b.Name && slices.Equal(a.Given, b.Given) && slices.Equal(a.When, b.When) && slices.Equal(a.Then, b.Then)
}

// Differs lists what r changes of old, the same requirement as main's
// living spec has it, each as read (ContentOf): "title", "text",
// "scenarios", in that order; none when r is old as read. It is
// Standing.Differs.
func Differs(r, old Requirement) []string {
	var out []string
	a, b := ContentOf(r).AsRead(), ContentOf(old).AsRead()
	if a.Title != b.Title {
		out = append(out, "title")
	}
	if a.Text != b.Text {
		out = append(out, "text")
	}
	if !slices.EqualFunc(a.Scenarios, b.Scenarios, sameScenario) {
		out = append(out, "scenarios")
	}
	return out
}
