package config

import (
	"maps"
	"slices"

	"github.com/set-engine/set/engine/pathglob"
)

// This file is where the adopted learnings (Project.Adopted) meet the
// parts that enforce them: the conventions a change's agent is given,
// the globs that serialise dispatch, and the patterns the rules gate
// forbids. Each reads them here, so that what a run records as enforced
// (RUN_STARTED, PLAN_CREATED, AGENT_SESSION_DECISION) is what it enforced.

// ConventionsFor is the adopted convention learnings that a change of
// type changeType with scope is given, ordered by name: those whose
// types hold changeType (every type when empty) and whose paths a file
// the change may touch matches (every change when empty; a change
// without a scope may touch any file).
func (p *Project) ConventionsFor(changeType string, scope []string) []NamedLearning {
	var out []NamedLearning
	for _, l := range p.Adopted(LearningConvention) {
		if len(l.Types) > 0 && !slices.Contains(l.Types, changeType) {
			continue
		}
		if len(l.Paths) > 0 && len(pathglob.Touching(scope, l.Paths)) == 0 {
			continue
		}
		out = append(out, l)
	}
	return out
}

// PlannerLearnings is the adopted learnings a model planner is given,
// ordered by name: every convention (the planner plans every change,
// whatever its type or scope) and every planning learning.
func (p *Project) PlannerLearnings() []NamedLearning {
	var out []NamedLearning
	for _, l := range p.Adopted("") {
		if l.Kind == LearningConvention || l.Kind == LearningPlanning {
			out = append(out, l)
		}
	}
	return out
}

// Rule is a pattern the rules gate forbids in the lines a change adds:
// a forbidden pattern of the project, or an adopted rule learning.
type Rule struct {
	// Name is the forbidden pattern's key, or "learning " and the
	// learning's: how a failure names the rule.
	Name string
	// Pattern is an RE2 expression; Message what a matching line is told.
	Pattern, Message string
	// Paths limits the rule to the files they match; empty: every file.
	Paths []string
}

// Rules is what the rules gate checks: the forbidden patterns by name,
// then the adopted rule learnings by name.
func (p *Project) Rules() []Rule {
	var out []Rule
	for _, name := range slices.Sorted(maps.Keys(p.Forbidden)) {
		f := p.Forbidden[name]
		out = append(out, Rule{Name: name, Pattern: f.Pattern, Message: f.Message, Paths: f.Paths})
	}
	for _, l := range p.Adopted(LearningRule) {
		out = append(out, Rule{Name: "learning " + l.Name, Pattern: l.Pattern, Message: l.Text, Paths: l.Paths})
	}
	return out
}

// Names is the learnings' names, in their order; nil for none.
func Names(ls []NamedLearning) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}

// Texts is the learnings' texts, in their order; nil for none.
func Texts(ls []NamedLearning) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Text)
	}
	return out
}
