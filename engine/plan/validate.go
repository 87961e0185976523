package plan

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/spec"
)

// namePattern is the kebab-case form of a change name (schema.#Name).
var namePattern = regexp.MustCompile(NamePattern)

// MaxNameLen is the longest change name, in bytes: a name is a path
// element and a git ref component, often with a prefix and a suffix.
const MaxNameLen = 64

// ValidName reports whether name is a valid change name: kebab-case, so
// that it is safe as a path element, a git ref component and an argv item,
// and at most MaxNameLen long.
func ValidName(name string) bool { return len(name) <= MaxNameLen && namePattern.MatchString(name) }

// reservedName says why name, a valid name, cannot name a change because
// set's own layout uses it, or "". (.set/logs holds changes' folders
// beside _dashboard, the dashboard's applies, and dagger.log, neither of
// which is kebab-case.)
func reservedName(name string) string {
	if name == "archive" {
		return "openspec/changes/archive holds the archived changes"
	}
	return ""
}

// Problem is one reason a plan is invalid. It prints as configuration
// errors do, the position last: "MESSAGE: set.cue:30:5".
type Problem struct {
	// Pos is where the problem was declared ("set.cue:30:5"), if known.
	Pos     string
	Message string
	// Change is the change at fault and Deferred the deferred requirement
	// at fault, or "".
	Change, Deferred string
	// Path is the field at fault below `project` (plan.changes.api) and At
	// its position, when the plan is the project's explicit one (see
	// Make); At is the requirement's place in the spec for one that no
	// change covers.
	Path []string
	At   config.Pos
}

func (p Problem) String() string {
	if p.Pos == "" {
		return p.Message
	}
	return p.Message + ": " + p.Pos
}

// InvalidError lists every problem of an invalid plan.
type InvalidError struct {
	Problems []Problem
}

// Diagnostics lists the problems as diagnostics, in the order Validate
// found them.
func (e *InvalidError) Diagnostics() diag.List {
	out := make(diag.List, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = diag.Diagnostic{Severity: diag.Error, Summary: p.Message, Pos: p.At}
		if len(p.Path) > 0 {
			out[i].Path = append([]string{"project"}, p.Path...)
		}
	}
	return out
}

// locate gives every problem about a change or a deferred requirement of
// the explicit plan of cfg its field path and position.
func (e *InvalidError) locate(cfg *config.Project) {
	for i := range e.Problems {
		p := &e.Problems[i]
		switch {
		case p.Change != "":
			p.Path = []string{"plan", "changes", p.Change}
		case p.Deferred != "":
			p.Path = []string{"plan", "deferred", p.Deferred}
		default:
			continue
		}
		if pos, ok := cfg.Positions.At[strings.Join(p.Path, ".")]; ok {
			p.At = pos
		}
	}
}

func (e *InvalidError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return "invalid plan:\n  " + strings.Join(lines, "\n  ")
}

// Limits are the plan rules that come from the project.
type Limits struct {
	MaxRequirementsPerChange int
}

// Validate checks the plan and returns an *InvalidError listing every
// problem, or nil. It checks: names are kebab-case and unique; dependencies
// name existing changes other than the change itself; the dependency graph
// is acyclic (a cycle is reported as its path, a → b → a); every
// requirement main does not implement yet (new, changed or removed) is
// covered by exactly one change or deferred with a reason;
// no change covers an unknown requirement; a change holds at most
// MaxRequirementsPerChange requirements (but for the openspec strategy,
// whose changes are the user's folders); a requirement's `Depends on`
// points into the same change or into one the change depends on,
// transitively.
func Validate(p *Plan, limits Limits) error {
	v := validator{p: p, byName: map[string]*Change{}}
	v.names()
	v.dependencies()
	// A change that depends on itself is reported by dependencies().
	if cycle := FindCycle(p); len(cycle) > 2 {
		c, _ := p.Change(cycle[0])
		v.add(c, "dependency cycle: %s", strings.Join(cycle, " → "))
	}
	v.coverage(limits)
	if len(v.problems) == 0 {
		v.requirementOrder()
	}
	if len(v.problems) > 0 {
		return &InvalidError{Problems: v.problems}
	}
	return nil
}

type validator struct {
	p        *Plan
	byName   map[string]*Change
	problems []Problem
}

// add records a problem of change c (nil for none).
func (v *validator) add(c *Change, format string, args ...any) {
	p := Problem{Message: fmt.Sprintf(format, args...)}
	if c != nil {
		p.Pos, p.Change = c.Pos, c.Name
	}
	v.problems = append(v.problems, p)
}

// addProblem records a problem that is not about one change.
func (v *validator) addProblem(p Problem, format string, args ...any) {
	p.Message = fmt.Sprintf(format, args...)
	v.problems = append(v.problems, p)
}

func (v *validator) names() {
	for i := range v.p.Changes {
		c := &v.p.Changes[i]
		switch {
		case len(c.Name) > MaxNameLen:
			v.add(c, "change name %q is %d characters long, more than the limit of %d", c.Name, len(c.Name), MaxNameLen)
		case !ValidName(c.Name):
			v.add(c, "change name %q is not kebab-case (want e.g. \"user-login\")", c.Name)
		case reservedName(c.Name) != "":
			v.add(c, "change name %q is reserved: %s", c.Name, reservedName(c.Name))
		}
		if prev, dup := v.byName[c.Name]; dup {
			v.add(c, "change %q is declared twice (first at %s)", c.Name, orUnknown(prev.Pos))
			continue
		}
		v.byName[c.Name] = c
	}
}

func (v *validator) dependencies() {
	for i := range v.p.Changes {
		c := &v.p.Changes[i]
		for _, d := range c.DependsOn {
			switch {
			case d == c.Name:
				v.add(c, "change %q depends on itself", c.Name)
			case v.byName[d] == nil:
				v.add(c, "change %q depends on unknown change %q%s", c.Name, d, suggest(d, slices.DeleteFunc(v.changeNames(), func(n string) bool { return n == c.Name })))
			}
		}
	}
}

func (v *validator) changeNames() []string {
	names := make([]string, 0, len(v.byName))
	for n := range v.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (v *validator) coverage(limits Limits) {
	known := map[string]bool{}
	for _, r := range v.p.Requirements {
		known[r.ID] = true
	}
	coveredBy := map[string]string{}
	for i := range v.p.Changes {
		c := &v.p.Changes[i]
		// A change folder of the openspec strategy is the user's unit of
		// work: set neither splits it nor holds it to the limit.
		if limits.MaxRequirementsPerChange > 0 && len(c.Requirements) > limits.MaxRequirementsPerChange && v.p.Strategy != config.StrategyOpenSpec {
			v.add(c, "change %q has %d requirements, more than the limit of %d (planner.maxRequirementsPerChange)",
				c.Name, len(c.Requirements), limits.MaxRequirementsPerChange)
		}
		for _, id := range c.Requirements {
			if !known[id] {
				v.add(c, "change %q covers %s, which no spec file defines", c.Name, id)
				continue
			}
			if first, dup := coveredBy[id]; dup {
				v.add(c, "%s is covered by both %q and %q", id, first, c.Name)
				continue
			}
			coveredBy[id] = c.Name
		}
	}
	deferred := map[string]bool{}
	for _, d := range v.p.Deferred {
		switch {
		case !known[d.Requirement]:
			v.addProblem(Problem{Deferred: d.Requirement}, "deferred %s is not a requirement of the spec", d.Requirement)
		case strings.TrimSpace(d.Reason) == "":
			v.addProblem(Problem{Deferred: d.Requirement}, "deferred %s needs a reason", d.Requirement)
		case coveredBy[d.Requirement] != "":
			v.addProblem(Problem{Deferred: d.Requirement}, "%s is both deferred and covered by %q", d.Requirement, coveredBy[d.Requirement])
		}
		deferred[d.Requirement] = true
	}
	for _, r := range v.p.Requirements {
		if coveredBy[r.ID] != "" || deferred[r.ID] {
			continue
		}
		at := Problem{At: config.Pos{File: r.File, Line: r.Line}}
		switch st := v.p.Standing(r.ID); st.Status {
		case spec.Removed:
			v.addProblem(at, "%s is no longer in the spec, but %s still holds it: add it to a change that removes it, or defer it with a reason", r.ID, r.File)
		case spec.New, spec.Changed:
			v.addProblem(at, "%s is not covered by any change: add it to a change, or defer it with a reason", r.ID)
		}
	}
}

// requirementOrder checks that a requirement's dependencies are merged no
// later than the requirement itself. It runs only on an otherwise valid
// plan, so the change graph is acyclic and every name resolves.
func (v *validator) requirementOrder() {
	changeOf := map[string]string{}
	for _, c := range v.p.Changes {
		for _, id := range c.Requirements {
			changeOf[id] = c.Name
		}
	}
	deferred := map[string]bool{}
	for _, d := range v.p.Deferred {
		deferred[d.Requirement] = true
	}
	ancestors := Ancestors(v.p)
	for _, r := range v.p.Requirements {
		owner := changeOf[r.ID]
		if owner == "" {
			continue
		}
		for _, dep := range r.DependsOn {
			switch target := changeOf[dep]; {
			case deferred[dep]:
				v.add(v.byName[owner], "%s in change %q depends on %s, which is deferred", r.ID, owner, dep)
			case target != "" && target != owner && !ancestors[owner][target]:
				v.add(v.byName[owner], "%s in change %q depends on %s in change %q, but %q does not depend on %q",
					r.ID, owner, dep, target, owner, target)
			}
		}
	}
}

// Ancestors maps each change to the set of changes it depends on,
// directly or transitively. The plan must be acyclic.
func Ancestors(p *Plan) map[string]map[string]bool {
	deps := map[string][]string{}
	for _, c := range p.Changes {
		deps[c.Name] = c.DependsOn
	}
	out := map[string]map[string]bool{}
	var walk func(n string) map[string]bool
	walk = func(n string) map[string]bool {
		if a, ok := out[n]; ok {
			return a
		}
		a := map[string]bool{}
		out[n] = a
		for _, d := range deps[n] {
			a[d] = true
			for x := range walk(d) {
				a[x] = true
			}
		}
		return a
	}
	for n := range deps {
		walk(n)
	}
	return out
}

func orUnknown(pos string) string {
	if pos == "" {
		return "an earlier entry"
	}
	return pos
}

// suggest returns ` (did you mean "x"?)` for the closest name within a
// small edit distance, or "".
func suggest(name string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
