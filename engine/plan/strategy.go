package plan

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/openspec"
	"github.com/set-engine/set/engine/spec"
)

// StrategyExplicit names a plan written in set.cue under `project.plan`.
const StrategyExplicit = "explicit"

// Record is what main records as done, for MakeWith: the requirements
// its living specs hold (openspec/specs), and the changes whose commit is
// on it (by their Set-Change trailer). The zero Record is a main that
// implements nothing.
type Record struct {
	Living []spec.LivingRequirement
	Landed map[string]bool
	// Sources maps each spec file to its content, for the Purpose of a
	// new capability (spec.Purposes).
	Sources map[string][]byte
	// OpenSpec is main's openspec/ directory (living specs, open change
	// folders and the archive), read for the openspec strategy only
	// (config.StrategyOpenSpec), which plans its open change folders;
	// nil for the others.
	OpenSpec openspec.Tree
}

// MakeWith builds and validates the plan of a project: what the spec asks
// for beyond what main implements (rec). Every requirement gets its
// standing (spec.Compare); the changes are the explicit plan of set.cue
// when there is one, the static strategy's over every requirement, the
// removed ones included, or the model's (m) over the requirements main
// does not implement; then main's work is pruned from them (see prune),
// so that a change keeps its name from one plan to the next while main
// moves. A strategy that asks a model without m is a *NeedsModelError,
// never replaced by another; with nothing to plan, no model is asked.
//
// The openspec strategy plans the open change folders of rec.OpenSpec
// instead, one change per folder (FromFolders), and neither s nor m.
func MakeWith(ctx context.Context, cfg *config.Project, s *spec.Spec, rec Record, fp Fingerprint, m Modeler) (*Plan, error) {
	if cfg.Planner.FromFolders() {
		return fromOpenSpec(cfg, rec, fp, time.Now())
	}
	standings := spec.Compare(s.Requirements, rec.Living)
	reqs := slices.Clone(s.Requirements)
	existing := map[string]bool{}
	for _, l := range rec.Living {
		existing[l.Capability] = true
	}
	for _, st := range standings {
		if st.Status != spec.Removed {
			continue
		}
		for _, l := range rec.Living {
			if l.ID == st.ID {
				reqs = append(reqs, l.Requirement)
			}
		}
	}
	p := &Plan{
		Version:      FormatVersion,
		Project:      cfg.Name,
		Fingerprint:  fp,
		Requirements: reqs,
		Standings:    standings,
	}
	if purposes := spec.Purposes(s.Requirements, standings, existing, rec.Sources); len(purposes) > 0 {
		p.Purposes = purposes
	}
	switch {
	case cfg.Plan != nil:
		p.Strategy = StrategyExplicit
		p.Changes, p.Deferred = explicit(cfg)
	case cfg.Planner.Strategy == config.StrategyStatic:
		p.Strategy = config.StrategyStatic
		p.Changes = Static(reqs, cfg.Planner.MaxRequirementsPerChange)
	case m == nil:
		return nil, &NeedsModelError{Strategy: cfg.Planner.Strategy}
	default:
		p.Strategy = cfg.Planner.Strategy
		if cover := p.Pending(); len(cover) > 0 {
			changes, planning, err := m.Changes(ctx, p, cover, nil)
			if err != nil {
				return nil, err
			}
			p.Changes, p.Planning, p.Strategy = changes, planning, planning.Strategy
		}
	}
	prune(p, rec.Landed)
	if p.Strategy == config.StrategyStatic {
		describe(p)
		scopeByDomain(p, cfg.Planner)
	}
	if err := Validate(p, Limits{MaxRequirementsPerChange: cfg.Planner.MaxRequirementsPerChange}); err != nil {
		if inv, ok := err.(*InvalidError); ok && p.Strategy == StrategyExplicit {
			inv.locate(cfg)
		}
		return nil, err
	}
	changes, err := TopoSort(p.Changes)
	if err != nil {
		return nil, err
	}
	p.Changes = changes
	p.Learnings = Used(cfg, p.Planning != nil)
	return p, nil
}

// Used is the names of the adopted learnings a plan of cfg uses, sorted:
// when a model planned it (modelled), those its planner was given (every
// convention and planning learning, config.Project.PlannerLearnings);
// whoever planned it, the planning learnings whose serialise globs keep
// its changes apart at dispatch (config.Project.CrossCuttingGlobs).
func Used(cfg *config.Project, modelled bool) []string {
	var names []string
	for _, l := range cfg.PlannerLearnings() {
		if modelled || len(l.Serialise) > 0 {
			names = append(names, l.Name)
		}
	}
	return names
}

// prune takes out of p's changes the work main has done: a requirement
// main implements leaves its change, and a change left without
// requirements goes, as does a change that never had any and whose commit
// is on main (landed); so does every dependency on a change that went,
// since main has it. A change named like one that landed is new work, and
// is renamed "<name>-2" (or the next free number): its folder is archived
// under its name. Deferring a requirement main implements is dropped.
// A requirement unknown to the plan stays, for Validate to report.
func prune(p *Plan, landed map[string]bool) {
	done := map[string]bool{}
	for _, st := range p.Standings {
		if !st.Status.Pending() {
			done[st.ID] = true
		}
	}
	gone := map[string]bool{}
	kept := p.Changes[:0]
	for _, c := range p.Changes {
		had := len(c.Requirements) > 0
		c.Requirements = slices.DeleteFunc(slices.Clone(c.Requirements), func(id string) bool { return done[id] })
		if had && len(c.Requirements) == 0 || !had && landed[c.Name] {
			gone[c.Name] = true
			continue
		}
		kept = append(kept, c)
	}
	// A change name is used once, as OpenSpec's archive wants: one that
	// landed already gets the first free "<name>-<n>".
	renamed := map[string]string{}
	used := map[string]bool{}
	for _, c := range kept {
		used[c.Name] = true
	}
	for i := range kept {
		if name := kept[i].Name; landed[name] {
			for n := 2; ; n++ {
				if alt := fmt.Sprintf("%s-%d", name, n); !landed[alt] && !used[alt] {
					renamed[name], kept[i].Name, used[alt] = alt, alt, true
					break
				}
			}
		}
	}
	for i := range kept {
		kept[i].DependsOn = slices.DeleteFunc(slices.Clone(kept[i].DependsOn), func(d string) bool { return gone[d] })
		for j, d := range kept[i].DependsOn {
			if alt, ok := renamed[d]; ok {
				kept[i].DependsOn[j] = alt
			}
		}
	}
	p.Changes = kept
	p.Deferred = slices.DeleteFunc(p.Deferred, func(d Deferred) bool { return done[d.Requirement] })
}

// describe gives every change of a static plan the description, size and
// dependencies of the requirements prune left it (as Static does).
func describe(p *Plan) {
	changeOf := map[string]string{}
	for _, c := range p.Changes {
		for _, id := range c.Requirements {
			changeOf[id] = c.Name
		}
	}
	for i := range p.Changes {
		c := &p.Changes[i]
		scenarios := 0
		var titles, deps []string
		for _, id := range c.Requirements {
			r, _ := p.Requirement(id)
			scenarios += len(r.Scenarios)
			titles = append(titles, r.Title)
			for _, d := range r.DependsOn {
				if owner := changeOf[d]; owner != "" && owner != c.Name {
					deps = append(deps, owner)
				}
			}
		}
		c.Size = sizeFor(scenarios)
		c.Description = strings.Join(titles, "; ")
		c.DependsOn = sortedUnique(deps)
	}
}

// scopeByDomain gives every change of a static plan the paths that
// planner.scopes gives its domain as its scope (none when its domain has
// none: it may touch any file).
func scopeByDomain(p *Plan, planner config.Planner) {
	for i := range p.Changes {
		p.Changes[i].Scope = planner.ScopeOf(p.Changes[i].Domain)
	}
}

// explicit converts the plan written in set.cue.
func explicit(cfg *config.Project) ([]Change, []Deferred) {
	var changes []Change
	for _, name := range slices.Sorted(maps.Keys(cfg.Plan.Changes)) {
		c := cfg.Plan.Changes[name]
		c.DependsOn = sortedUnique(c.DependsOn)
		c.Pos = cfg.Pos("plan.changes." + name)
		changes = append(changes, c)
	}
	var deferred []Deferred
	for _, id := range slices.Sorted(maps.Keys(cfg.Plan.Deferred)) {
		deferred = append(deferred, Deferred{Requirement: id, Reason: cfg.Plan.Deferred[id]})
	}
	return changes, deferred
}

// Static is the deterministic strategy: requirements are grouped by domain
// (domains in order of first appearance), ordered inside a domain so that a
// requirement follows the ones it depends on, and split into balanced
// changes of at most max requirements. A change depends on every other
// change that holds a requirement one of its requirements depends on. Its
// size follows its number of scenarios.
func Static(reqs []spec.Requirement, max int) []Change {
	if max < 1 {
		max = 1
	}
	var domains []string
	byDomain := map[string][]spec.Requirement{}
	for _, r := range reqs {
		if _, seen := byDomain[r.Domain]; !seen {
			domains = append(domains, r.Domain)
		}
		byDomain[r.Domain] = append(byDomain[r.Domain], r)
	}

	var changes []Change
	changeOf := map[string]int{} // requirement ID → index in changes
	used := map[string]bool{}
	for _, d := range domains {
		ordered := orderWithinDomain(byDomain[d])
		chunks := balancedChunks(ordered, max)
		base := changeName(d)
		for i, chunk := range chunks {
			name := base
			if len(chunks) > 1 {
				name = base + "-" + strconv.Itoa(i+1)
			}
			name = uniqueName(name, used)
			c := Change{Name: name, Type: "feature", Domain: d}
			scenarios := 0
			var titles []string
			for _, r := range chunk {
				c.Requirements = append(c.Requirements, r.ID)
				changeOf[r.ID] = len(changes)
				scenarios += len(r.Scenarios)
				titles = append(titles, r.Title)
			}
			c.Size = sizeFor(scenarios)
			c.Description = strings.Join(titles, "; ")
			changes = append(changes, c)
		}
	}
	for _, r := range reqs {
		i, ok := changeOf[r.ID]
		if !ok {
			continue
		}
		for _, dep := range r.DependsOn {
			if j, ok := changeOf[dep]; ok && j != i {
				changes[i].DependsOn = append(changes[i].DependsOn, changes[j].Name)
			}
		}
	}
	for i := range changes {
		changes[i].DependsOn = sortedUnique(changes[i].DependsOn)
	}
	return changes
}

// orderWithinDomain puts each requirement after the requirements of the
// same domain it depends on, keeping document order otherwise. Cycles
// (rejected later) leave the remaining requirements in document order.
func orderWithinDomain(reqs []spec.Requirement) []spec.Requirement {
	index := map[string]int{}
	for i, r := range reqs {
		index[r.ID] = i
	}
	placed := make([]bool, len(reqs))
	out := make([]spec.Requirement, 0, len(reqs))
	for len(out) < len(reqs) {
		progress := false
		for i, r := range reqs {
			if placed[i] {
				continue
			}
			ready := true
			for _, d := range r.DependsOn {
				if j, ok := index[d]; ok && !placed[j] && j != i {
					ready = false
					break
				}
			}
			if ready {
				placed[i] = true
				out = append(out, r)
				progress = true
				break
			}
		}
		if !progress {
			for i, r := range reqs {
				if !placed[i] {
					placed[i] = true
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// balancedChunks splits reqs into the fewest chunks of at most max, with
// sizes differing by at most one (earlier chunks are the larger).
func balancedChunks(reqs []spec.Requirement, max int) [][]spec.Requirement {
	n := (len(reqs) + max - 1) / max
	if n == 0 {
		return nil
	}
	out := make([][]spec.Requirement, 0, n)
	start := 0
	for i := range n {
		size := len(reqs) / n
		if i < len(reqs)%n {
			size++
		}
		out = append(out, reqs[start:start+size])
		start += size
	}
	return out
}

func sizeFor(scenarios int) string {
	switch {
	case scenarios <= 3:
		return SizeS
	case scenarios <= 8:
		return SizeM
	default:
		return SizeL
	}
}

var nonName = regexp.MustCompile(`[^a-z0-9]+`)

// changeName is the kebab-case change name for a domain.
func changeName(domain string) string { return Kebab(domain, "change-") }

// Kebab turns s into a valid name (see ValidName): lower-case, runs of
// other characters turned into single hyphens, at most 48 characters; a
// result that would not start with a letter gets prefix in front.
func Kebab(s, prefix string) string {
	s = strings.Trim(nonName.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		s = prefix + s
	}
	s = strings.TrimSuffix(s, "-")
	if len(s) > 48 {
		s = strings.TrimRight(s[:48], "-")
	}
	return s
}

func uniqueName(name string, used map[string]bool) string {
	candidate := name
	for i := 2; used[candidate]; i++ {
		candidate = name + "-" + strconv.Itoa(i)
	}
	used[candidate] = true
	return candidate
}

// sortedUnique returns xs sorted without duplicates, never nil (so a plan
// file always says "dependsOn": []).
func sortedUnique(xs []string) []string {
	out := append([]string{}, xs...)
	sort.Strings(out)
	return slices.Compact(out)
}
