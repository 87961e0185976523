package plan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/spec"
)

// livingOf is requirements as main's living specs record them: each in
// the capability of its domain.
func livingOf(reqs ...spec.Requirement) []spec.LivingRequirement {
	var out []spec.LivingRequirement
	for _, r := range reqs {
		c := spec.Canonical(r)
		c.File = "openspec/specs/" + r.Domain + "/spec.md"
		out = append(out, spec.LivingRequirement{Requirement: c, Capability: r.Domain, Name: spec.OpenSpecName(r)})
	}
	return out
}

func changeLines(p *Plan) []string {
	var out []string
	for _, c := range p.Changes {
		out = append(out, c.Name+" "+strings.Join(c.Requirements, ",")+" <- "+strings.Join(c.DependsOn, ","))
	}
	return out
}

// TestMakePlansWhatMainLacks: a requirement main implements is not
// planned; a change keeps the name it has in the plan of the whole spec;
// a removed requirement is planned in its domain.
func TestMakePlansWhatMainLacks(t *testing.T) {
	cfg := &config.Project{Name: "p", Planner: config.Planner{Strategy: "static", MaxRequirementsPerChange: 2}}
	a1, a2, a3 := req("REQ-A-01", 1), req("REQ-A-02", 1, "REQ-A-01"), req("REQ-A-03", 1)
	b1, b2 := req("REQ-B-01", 2, "REQ-A-01"), req("REQ-B-02", 1)
	s := &spec.Spec{Requirements: []spec.Requirement{a1, a2, a3, b1}}

	whole, err := Make(cfg, s, Record{}, Fingerprint{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changeLines(whole), []string{"a-1 REQ-A-01,REQ-A-02 <- ", "a-2 REQ-A-03 <- ", "b REQ-B-01 <- a-1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the whole spec: %q, want %q", got, want)
	}

	edited := a3
	edited.Scenarios = []spec.Scenario{{Name: "s", When: []string{"w"}, Then: []string{"t", "more"}}}
	s.Requirements[2] = edited
	rec := Record{Living: livingOf(a1, a3, b1, b2)}
	p, err := Make(cfg, s, rec, Fingerprint{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changeLines(p), []string{"a-1 REQ-A-02 <- ", "a-2 REQ-A-03 <- ", "b REQ-B-02 <- "}; !reflect.DeepEqual(got, want) {
		t.Errorf("against main: %q, want %q", got, want)
	}
	var statuses []string
	for _, st := range p.Standings {
		statuses = append(statuses, st.ID+"="+string(st.Status))
	}
	if got, want := strings.Join(statuses, " "), "REQ-A-01=implemented REQ-A-02=new REQ-A-03=changed REQ-B-01=implemented REQ-B-02=removed"; got != want {
		t.Errorf("standings %s, want %s", got, want)
	}
	if r, ok := p.Requirement("REQ-B-02"); !ok || r.File != "openspec/specs/b/spec.md" {
		t.Errorf("the removed requirement is %+v, %v; want it from its living spec", r, ok)
	}
	if c, _ := p.Change("a-1"); c.Description != "title of REQ-A-02" || c.Size != SizeS {
		t.Errorf("a-1 is described %q, size %s; want its one requirement left", c.Description, c.Size)
	}

	rec.Living = livingOf(a1, a2, edited, b1)
	done, err := Make(cfg, s, rec, Fingerprint{})
	if err != nil {
		t.Fatal(err)
	}
	if len(done.Changes) != 0 {
		t.Errorf("main implements the whole spec, yet the plan has %q", changeLines(done))
	}
}

// TestMakeExplicitAgainstMain: an explicit plan keeps its changes' names;
// a change main has done goes (by its requirements, or by its commit when
// it has none), and so do dependencies on it; a removed requirement no
// change covers is an error naming its living spec.
func TestMakeExplicitAgainstMain(t *testing.T) {
	a1, a2, b1 := req("REQ-A-01", 1), req("REQ-A-02", 1), req("REQ-B-01", 1)
	cfg := &config.Project{Name: "p", Planner: config.Planner{Strategy: "static", MaxRequirementsPerChange: 6}, Plan: &config.Plan{Changes: map[string]config.Change{
		"first":  {Name: "first", Requirements: []string{"REQ-A-01"}},
		"second": {Name: "second", Requirements: []string{"REQ-A-02"}, DependsOn: []string{"first", "tools"}},
		"tools":  {Name: "tools"},
	}}}
	s := &spec.Spec{Requirements: []spec.Requirement{a1, a2}}
	p, err := Make(cfg, s, Record{Living: livingOf(a1), Landed: map[string]bool{"tools": true}}, Fingerprint{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changeLines(p), []string{"second REQ-A-02 <- "}; !reflect.DeepEqual(got, want) {
		t.Errorf("explicit against main: %q, want %q", got, want)
	}
	// first and second landed before, for other work: the new work of
	// second gets a name of its own, and so does what depends on it.
	cfg.Plan.Changes["third"] = config.Change{Name: "third", Requirements: []string{"REQ-A-03"}, DependsOn: []string{"second"}}
	s.Requirements = append(s.Requirements, req("REQ-A-03", 1))
	p, err = Make(cfg, s, Record{Living: livingOf(a1), Landed: map[string]bool{"first": true, "second": true, "second-2": true, "tools": true}}, Fingerprint{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changeLines(p), []string{"second-3 REQ-A-02 <- ", "third REQ-A-03 <- second-3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("explicit with names that landed: %q, want %q", got, want)
	}
	delete(cfg.Plan.Changes, "third")
	s.Requirements = s.Requirements[:2]

	_, err = Make(cfg, s, Record{Living: livingOf(a1, b1)}, Fingerprint{})
	if err == nil || !strings.Contains(err.Error(), "REQ-B-01 is no longer in the spec, but openspec/specs/b/spec.md still holds it: add it to a change that removes it, or defer it with a reason") {
		t.Errorf("a removed requirement no change covers: %v", err)
	}
}

// TestWork: a change's Work changes with its requirements' standing or
// content, and only then.
func TestWork(t *testing.T) {
	cfg := &config.Project{Name: "p", Planner: config.Planner{Strategy: "static", MaxRequirementsPerChange: 6}}
	a1, a2 := req("REQ-A-01", 1), req("REQ-A-02", 1)
	work := func(rec Record, reqs ...spec.Requirement) string {
		t.Helper()
		p, err := Make(cfg, &spec.Spec{Requirements: reqs}, rec, Fingerprint{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Work(p.Changes[0].Name)
	}
	base := work(Record{}, a1, a2)
	if base == "" || work(Record{}, a1, a2) != base {
		t.Fatal("the same plan twice gives different Work")
	}
	if work(Record{Landed: map[string]bool{"a": true}}, a1, a2) != base {
		t.Error("a landed commit of the same name changed the Work of a change with requirements (renamed a-2)")
	}
	if work(Record{Living: livingOf(a1)}, a1, a2) == base {
		t.Error("a requirement main implements left the Work unchanged")
	}
	b := a2
	b.Text = "other"
	if work(Record{}, a1, b) == base {
		t.Error("a changed text left the Work unchanged")
	}
}
