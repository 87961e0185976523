package plan

import (
	"maps"
	"reflect"
	"testing"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/openspec"
)

// For the openspec strategy, each open change folder on main is an input
// of the plan: a folder added or edited makes a saved plan stale, while a
// folder no longer open is what a run does when it archives it (ByRun).
// Archived folders, dot directories and files beside the folders are no
// change folders; the markdown strategies hash none.
func TestFingerprintFolders(t *testing.T) {
	cfg := &config.Project{Name: "p", Planner: config.Planner{Strategy: config.StrategyOpenSpec}}
	tree := openspec.Tree{
		"openspec/specs/links/spec.md":                        []byte("# links\n"),
		"openspec/changes/add-x/proposal.md":                  []byte("## Why\nx\n"),
		"openspec/changes/add-x/specs/links/spec.md":          []byte("## ADDED Requirements\n"),
		"openspec/changes/mod-x/.openspec.yaml":               []byte("schema: spec-driven\n"),
		"openspec/changes/archive/2026-01-01-old/proposal.md": []byte("old\n"),
		"openspec/changes/.hidden/proposal.md":                []byte("hidden\n"),
		"openspec/changes/README.md":                          []byte("not a folder\n"),
	}
	fp := func(t openspec.Tree) Fingerprint {
		f, err := NewFingerprint(cfg, nil, "abc", nil, t)
		if err != nil {
			panic(err)
		}
		return f
	}
	a := fp(tree)
	if got := len(a.Folders); got != 2 || a.Folders["add-x"] == "" || a.Folders["mod-x"] == "" {
		t.Fatalf("Folders = %v, want add-x and mod-x", a.Folders)
	}
	if same := fp(tree); same.Sum != a.Sum || len(a.Changes(same)) != 0 {
		t.Fatalf("same folders, different fingerprints: %v", a.Changes(same))
	}
	if other := fp(treeWith(tree, "openspec/changes/archive/2026-02-02-z/x.md", "z")); other.Sum != a.Sum {
		t.Errorf("an archived folder changed the fingerprint: %v", a.Changes(other))
	}

	edited := treeWith(tree, "openspec/changes/add-x/tasks.md", "- [ ] 1.1 do\n")
	edited = treeWith(edited, "openspec/changes/new-y/proposal.md", "## Why\ny\n")
	delete(edited, "openspec/changes/mod-x/.openspec.yaml")
	b := fp(edited)
	want := []string{
		"openspec/changes/add-x changed",
		"openspec/changes/mod-x is no longer open (archived or removed)",
		"openspec/changes/new-y was added",
	}
	got := a.Changes(b)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Changes =\n%q\nwant\n%q", got, want)
	}
	if a.Sum == b.Sum {
		t.Error("different folders, same sum")
	}
	for i, byRun := range []bool{false, true, false} {
		if ByRun(got[i]) != byRun {
			t.Errorf("ByRun(%q) = %v, want %v", got[i], !byRun, byRun)
		}
	}

	cfg.Planner.Strategy = config.StrategyStatic
	if f := fp(tree); f.Folders != nil {
		t.Errorf("the static strategy hashed the folders: %v", f.Folders)
	}
}

// A run moves git HEAD and main's living specs itself; nothing else is
// excused.
func TestByRun(t *testing.T) {
	for change, want := range map[string]bool{
		"git HEAD moved from abc to def": true,
		LivingChanged:                    true,
		"openspec/changes/a is no longer open (archived or removed)": true,
		"openspec/changes/a changed":                                 false,
		"spec file spec.md changed":                                  false,
		"the configuration (set.cue and its modules) changed":        false,
	} {
		if got := ByRun(change); got != want {
			t.Errorf("ByRun(%q) = %v, want %v", change, got, want)
		}
	}
}

// treeWith is a copy of t with the file path holding content.
func treeWith(t openspec.Tree, path, content string) openspec.Tree {
	out := maps.Clone(t)
	out[path] = []byte(content)
	return out
}
