// Package plan holds the plan of a run: its changes, the requirements they
// cover, and the fingerprint of the inputs it was made from. A plan holds
// only what main does not implement yet: every requirement has a standing
// against main's living specs (spec.Standing), and changes cover the new,
// changed and removed ones. The changes come from set.cue's explicit
// plan, from the static strategy, or from a model (a Modeler:
// engine/plan/planner), whose calls the plan records (Planning). A Plan that Validate accepts is acyclic, covers
// every such requirement exactly once (or defers it with a reason), and
// keeps every change within the per-change requirement limit.
package plan

import (
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/spec"
)

// FormatVersion is the version of the plan file format this build writes
// and reads.
const FormatVersion = 1

// Sizes of a change, smallest first.
const (
	SizeS = "S"
	SizeM = "M"
	SizeL = "L"
)

// Sizes are the sizes of a change, smallest first (schema.#Size).
var Sizes = []string{SizeS, SizeM, SizeL}

// Types are the types of a change (schema.#ChangeType); each has its
// stack.
var Types = []string{"feature", "fix", "refactor", "infrastructure", "schema", "docs", "test", "cleanup"}

// NamePattern is the regular expression of a change name (schema.#Name).
const NamePattern = `^[a-z][a-z0-9]*(-[a-z0-9]+)*$`

// Plan is the changes of one run (config.Plan is a plan the user wrote
// in set.cue, one source of it).
type Plan struct {
	Version     int         `json:"version"`
	Project     string      `json:"project"`
	Strategy    string      `json:"strategy"`
	Fingerprint Fingerprint `json:"fingerprint"`
	// Changes are in the order of their DAG: every change comes after the
	// changes it depends on; ties go to the higher priority (the critical
	// path first), then to the smaller name.
	Changes  []Change   `json:"changes"`
	Deferred []Deferred `json:"deferred,omitempty"`
	// Requirements are the spec's requirements, then those the living
	// specs on main hold and the spec no longer does (removed; their File
	// is their living spec).
	Requirements []spec.Requirement `json:"requirements"`
	// Standings holds the standing of each of Requirements, in the same
	// order. A plan without standings treats every requirement as new.
	Standings []spec.Standing `json:"standings,omitempty"`
	// Purposes gives, by capability, the Purpose of each capability that
	// new requirements go to and main has no living spec of (see
	// spec.Purposes); change folders carry it.
	Purposes map[string]string `json:"purposes,omitempty"`
	// Planning records how a model made the changes; nil for the static
	// strategy and explicit plans.
	Planning *Planning `json:"planning,omitempty"`
	// Learnings are the names of the adopted learnings the plan used
	// (Used), sorted; PLAN_CREATED records them.
	Learnings []string `json:"learnings,omitempty"`
}

// Change is one unit of work, implemented by one agent in one worktree.
// It is the engine's one change type, declared in engine/config so that an
// explicit plan in set.cue decodes straight into it.
type Change = config.Change

// Deferred is a requirement left out of this plan on purpose.
type Deferred struct {
	Requirement string `json:"requirement"`
	Reason      string `json:"reason"`
}

// Change returns the change with the given name.
func (p *Plan) Change(name string) (*Change, bool) {
	for i := range p.Changes {
		if p.Changes[i].Name == name {
			return &p.Changes[i], true
		}
	}
	return nil, false
}

// Standing returns how the requirement with the given ID stands against
// main's living specs: new when the plan has no standings.
func (p *Plan) Standing(id string) spec.Standing {
	for _, st := range p.Standings {
		if st.ID == id {
			return st
		}
	}
	st := spec.Standing{ID: id, Status: spec.New}
	if r, ok := p.Requirement(id); ok {
		st.Capability = r.Domain
	}
	return st
}

// Requirement returns the requirement with the given ID.
func (p *Plan) Requirement(id string) (spec.Requirement, bool) {
	for _, r := range p.Requirements {
		if r.ID == id {
			return r, true
		}
	}
	return spec.Requirement{}, false
}

// SizeWeight is a change's weight on the critical path.
func SizeWeight(size string) int {
	switch size {
	case SizeS:
		return 1
	case SizeL:
		return 5
	default:
		return 3
	}
}
