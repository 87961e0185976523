package spec

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/openspec"
)

// loopSpec is a spec in every form set reads, for the round trip tests.
const loopSpec = `# Shop

## Cart
The cart holds what a visitor is about to buy.

### REQ-CART-01: Add an item
The cart SHALL take any item in stock.

#### Heading in the text
` + "```" + `
### not a heading, code
` + "```" + `

#### Scenario: in stock
- **GIVEN** an item in stock
- **AND** an empty cart
- **WHEN** the visitor adds it
- **THEN** the cart holds it
- **AND** the count is 1

### REQ-CART-02: Empty the cart
- WHEN the visitor empties the cart
- THEN it holds nothing

- **REQ-CART-03**: Cart total
  The total SHALL be the sum of the prices.
  - WHEN two items of 2 and 3 are in the cart
  - THEN the total is 5

## Checkout

### Requirement: Pay
The visitor MUST pay before the order ships.
#### Scenario: card
- WHEN the visitor pays by card
- THEN the order is paid
`

func parseLoopSpec(t *testing.T) []Requirement {
	t.Helper()
	reqs, diags := Parse("docs/spec.md", []byte(loopSpec), Options{})
	for _, d := range diags {
		if d.Severity == diag.Error {
			t.Fatalf("loopSpec: %s", d)
		}
	}
	if len(reqs) != 4 {
		t.Fatalf("loopSpec has %d requirements, want 4", len(reqs))
	}
	return reqs
}

func TestFormatRequirement(t *testing.T) {
	reqs := parseLoopSpec(t)
	got := FormatRequirement(reqs[0])
	want := `### Requirement: REQ-CART-01: Add an item
The cart SHALL take any item in stock.

##### Heading in the text

` + "```" + `
### not a heading, code
` + "```" + `

#### Scenario: in stock
- **GIVEN** an item in stock
- **AND** an empty cart
- **WHEN** the visitor adds it
- **THEN** the cart holds it
- **AND** the count is 1`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FormatRequirement (-want +got):\n%s", diff)
	}
	if got, want := FormatRequirement(reqs[1]), "### Requirement: REQ-CART-02: Empty the cart\nThe system SHALL meet this requirement: Empty the cart.\n\n#### Scenario: scenario 1\n- **WHEN** the visitor empties the cart\n- **THEN** it holds nothing"; got != want {
		t.Errorf("FormatRequirement = %q, want %q", got, want)
	}
}

// TestCanonicalRoundTrip: what set writes reads back as the requirement
// it wrote, with its ID and title, and writing that again changes nothing.
func TestCanonicalRoundTrip(t *testing.T) {
	for _, r := range parseLoopSpec(t) {
		c := Canonical(r)
		if c.ID != r.ID || c.Title != r.Title {
			t.Errorf("%s: Canonical is %s %q", r.ID, c.ID, c.Title)
		}
		if !reflect.DeepEqual(ContentOf(c), ContentOf(r)) {
			t.Errorf("%s: Canonical is not idempotent:\n%s", r.ID, cmp.Diff(ContentOf(r), ContentOf(c)))
		}
		if len(c.Scenarios) != len(r.Scenarios) {
			t.Errorf("%s: %d scenarios read back, want %d", r.ID, len(c.Scenarios), len(r.Scenarios))
		}
		if FormatRequirement(c) != FormatRequirement(r) {
			t.Errorf("%s: formatted twice differs:\n%s\n---\n%s", r.ID, FormatRequirement(r), FormatRequirement(c))
		}
	}
}

func TestParseLiving(t *testing.T) {
	files := map[string][]byte{
		"openspec/specs/cart/spec.md": []byte("# cart Specification\n\n## Purpose\nThe cart.\n\n## Requirements\n\n" +
			"### Requirement: REQ-CART-01: Add an item\nThe cart SHALL take it.\n\n#### Scenario: in stock\n- **WHEN** added\n- **THEN** held\n\n" +
			"### Requirement: Hand-written, no ID\nSomething SHALL happen.\n\n#### Scenario: s\n- **WHEN** a\n- **THEN** b\n"),
		"openspec/specs/search/full-text/spec.md": []byte("## Requirements\n\n### Requirement: REQ-SEARCH-01: Find words\nIt SHALL find.\n"),
		"openspec/changes/x/specs/cart/spec.md":   []byte("### Requirement: REQ-CART-09: not living\n"),
	}
	got, err := ParseLiving(files)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range got {
		lines = append(lines, l.Capability+" "+l.ID+" "+l.Name+" "+l.File)
	}
	want := []string{
		"cart REQ-CART-01 REQ-CART-01: Add an item openspec/specs/cart/spec.md",
		"search/full-text REQ-SEARCH-01 REQ-SEARCH-01: Find words openspec/specs/search/full-text/spec.md",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("ParseLiving (-want +got):\n%s", diff)
	}

	files["openspec/specs/other/spec.md"] = []byte("## Requirements\n\n### Requirement: REQ-CART-01: Again\nIt SHALL.\n")
	_, err = ParseLiving(files)
	if want := "openspec/specs/other/spec.md:3: requirement REQ-CART-01 is also at openspec/specs/cart/spec.md:8; main's living specs must name each requirement once"; err == nil || err.Error() != want {
		t.Errorf("ParseLiving with a duplicate: %v, want %s", err, want)
	}
}

// livingOf folds reqs, as a delta of ADDED requirements, into living specs.
func livingOf(t *testing.T, reqs []Requirement) map[string][]byte {
	t.Helper()
	var crs []ChangeRequirement
	for _, st := range Compare(reqs, nil) {
		for _, r := range reqs {
			if r.ID == st.ID {
				crs = append(crs, ChangeRequirement{Standing: st, Requirement: r})
			}
		}
	}
	return fold(t, nil, ChangeFolder(ChangeFolderInput{Change: "first", Requirements: crs}))
}

// fold applies the deltas of a change folder to living specs, as the
// archive does (openspec.ArchiveChange on a copy of both in a temporary
// directory, the change allowed to retire a capability whose last
// requirement it removes), and returns the new living specs.
func fold(t *testing.T, living map[string][]byte, folder map[string][]byte) map[string][]byte {
	t.Helper()
	root := t.TempDir()
	for name, data := range living {
		writeFile(t, filepath.Join(root, filepath.FromSlash(name)), data)
	}
	for name, data := range folder {
		writeFile(t, filepath.Join(root, filepath.FromSlash(ChangeDir("change")+"/"+name)), data)
	}
	writeFile(t, filepath.Join(root, filepath.FromSlash(ChangeDir("change")+"/.openspec.yaml")), []byte("schema: spec-driven\nretire_capabilities: true\n"))
	if _, err := openspec.ArchiveChange(root, "change", time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatalf("folding %v:\n%v", slices.Sorted(maps.Keys(folder)), err)
	}
	out := map[string][]byte{}
	specs := filepath.Join(root, filepath.FromSlash(LivingSpecsDir))
	err := filepath.WalkDir(specs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

func standings(t *testing.T, reqs []Requirement, living map[string][]byte) []Standing {
	t.Helper()
	l, err := ParseLiving(living)
	if err != nil {
		t.Fatal(err)
	}
	return Compare(reqs, l)
}

func statusLine(sts []Standing) string {
	var parts []string
	for _, s := range sts {
		p := s.ID + "=" + string(s.Status) + "@" + s.Capability
		if len(s.Differs) > 0 {
			p += "(" + strings.Join(s.Differs, ",") + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// TestCompareLoop is the spec loop on the living specs alone: a spec
// folded into empty living specs is implemented; a new requirement, an
// edited scenario, a new title and a removed requirement each stand out,
// and the delta set writes for them folds main back in line.
func TestCompareLoop(t *testing.T) {
	reqs := parseLoopSpec(t)
	if got, want := statusLine(Compare(reqs, nil)), "REQ-CART-01=new@cart REQ-CART-02=new@cart REQ-CART-03=new@cart REQ-CHECKOUT-01=new@checkout"; got != want {
		t.Fatalf("against no living spec: %s, want %s", got, want)
	}
	living := livingOf(t, reqs)
	if got, want := statusLine(standings(t, reqs, living)), "REQ-CART-01=implemented@cart REQ-CART-02=implemented@cart REQ-CART-03=implemented@cart REQ-CHECKOUT-01=implemented@checkout"; got != want {
		t.Fatalf("after the fold: %s, want %s", got, want)
	}

	edited := strings.NewReplacer(
		"- THEN it holds nothing", "- THEN it holds nothing at all", // a scenario of REQ-CART-02
		"Cart total", "Cart sum", // the title of REQ-CART-03
		"### REQ-CART-01: Add an item", "### REQ-CART-04: Remove an item\n- WHEN removed\n- THEN gone\n\n### REQ-CART-01: Add an item",
	).Replace(loopSpec)
	edited = edited[:strings.Index(edited, "## Checkout")] // REQ-CHECKOUT-01 removed
	next, _ := Parse("docs/spec.md", []byte(edited), Options{})
	sts := standings(t, next, living)
	if got, want := statusLine(sts), "REQ-CART-04=new@cart REQ-CART-01=implemented@cart REQ-CART-02=changed@cart(scenarios) REQ-CART-03=changed@cart(title) REQ-CHECKOUT-01=removed@checkout"; got != want {
		t.Fatalf("after the edits: %s, want %s", got, want)
	}

	l, _ := ParseLiving(living)
	content := map[string]Requirement{}
	for _, r := range next {
		content[r.ID] = r
	}
	for _, r := range l {
		if _, ok := content[r.ID]; !ok {
			content[r.ID] = r.Requirement
		}
	}
	var crs []ChangeRequirement
	for _, st := range sts {
		crs = append(crs, ChangeRequirement{Standing: st, Requirement: content[st.ID]})
	}
	folder := ChangeFolder(ChangeFolderInput{Change: "edit", SpecFiles: []string{"docs/spec.md"}, Requirements: crs})
	wantCart := `## ADDED Requirements

### Requirement: REQ-CART-04: Remove an item
The system SHALL meet this requirement: Remove an item.

#### Scenario: scenario 1
- **WHEN** removed
- **THEN** gone

## MODIFIED Requirements

### Requirement: REQ-CART-02: Empty the cart
The system SHALL meet this requirement: Empty the cart.

#### Scenario: scenario 1
- **WHEN** the visitor empties the cart
- **THEN** it holds nothing at all

## RENAMED Requirements

- FROM: ` + "`### Requirement: REQ-CART-03: Cart total`" + `
- TO: ` + "`### Requirement: REQ-CART-03: Cart sum`" + `
`
	if diff := cmp.Diff(wantCart, string(folder["specs/cart/spec.md"])); diff != "" {
		t.Errorf("cart delta (-want +got):\n%s", diff)
	}
	if got, want := string(folder["specs/checkout/spec.md"]), "## REMOVED Requirements\n\n### Requirement: REQ-CHECKOUT-01: Pay\n"; got != want {
		t.Errorf("checkout delta = %q, want %q", got, want)
	}
	after := fold(t, living, folder)
	if got, want := statusLine(standings(t, next, after)), "REQ-CART-04=implemented@cart REQ-CART-01=implemented@cart REQ-CART-02=implemented@cart REQ-CART-03=implemented@cart"; got != want {
		t.Errorf("after folding the edits: %s, want %s", got, want)
	}
}

// TestCompareDropped: a changed requirement that no longer has a scenario
// of the living spec (by name) says which, and why OpenSpec will refuse
// its delta.
func TestCompareDropped(t *testing.T) {
	reqs := parseLoopSpec(t)
	living := livingOf(t, reqs)
	renamed, _ := Parse("docs/spec.md", []byte(strings.Replace(loopSpec, "#### Scenario: in stock", "#### Scenario: available", 1)), Options{})
	sts := standings(t, renamed, living)
	if got := sts[0].Dropped; !reflect.DeepEqual(got, []string{"in stock"}) {
		t.Fatalf("Dropped = %q, want the scenario renamed away", got)
	}
	want := `REQ-CART-01 drops 1 scenario "in stock" that openspec/specs/cart/spec.md has; OpenSpec refuses a MODIFIED requirement that drops a scenario, so the delta set writes for it will not fold: keep the scenario under its name, or take it out of openspec/specs/cart/spec.md in a commit of its own first`
	if got := DropWarning(sts[0]); got != want {
		t.Errorf("DropWarning =\n%s\nwant\n%s", got, want)
	}
	if got := DropWarning(sts[1]); got != "" {
		t.Errorf("DropWarning of an implemented requirement = %q", got)
	}
}

func TestChangeFolderProposalAndTasks(t *testing.T) {
	reqs := parseLoopSpec(t)
	sts := Compare(reqs, nil)
	in := ChangeFolderInput{
		Change: "cart", SpecFiles: []string{"docs/spec.md"}, Scope: []string{"cart/**"},
		Requirements: []ChangeRequirement{{Standing: sts[0], Requirement: reqs[0]}, {Standing: sts[1], Requirement: reqs[1]}},
		Purposes:     map[string]string{"cart": "The cart holds what a visitor is about to buy."},
	}
	files := ChangeFolder(in)
	if got, want := strings.Join(slices.Sorted(maps.Keys(files)), " "), "proposal.md specs/cart/spec.md tasks.md"; got != want {
		t.Errorf("files %s, want %s", got, want)
	}
	wantProposal := "# cart\n\n## Why\n" +
		"The spec (docs/spec.md) and the living specs on main (openspec/specs) differ: 2 new requirements. This change brings main in line with the spec.\n\n" +
		"## What Changes\n- ADDED `REQ-CART-01: Add an item` (cart)\n- ADDED `REQ-CART-02: Empty the cart` (cart)\n\n" +
		"## Scope\nOnly files matching these paths (globs, ** spans directories):\n- `cart/**`\n"
	if diff := cmp.Diff(wantProposal, string(files["proposal.md"])); diff != "" {
		t.Errorf("proposal.md (-want +got):\n%s", diff)
	}
	wantTasks := "# Tasks\n\n## 1. Requirements\n\n" +
		"- [ ] 1.1 Implement REQ-CART-01: Add an item, with a test for each of its scenarios [REQ: REQ-CART-01]\n" +
		"- [ ] 1.2 Implement REQ-CART-02: Empty the cart, with a test for each of its scenarios [REQ: REQ-CART-02]\n\n" +
		"## 2. Checks\n\n- [ ] 2.1 Every test that covers a requirement names its ID\n- [ ] 2.2 The delta specs under specs/ are left as set wrote them\n"
	if diff := cmp.Diff(wantTasks, string(files["tasks.md"])); diff != "" {
		t.Errorf("tasks.md (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(string(files["specs/cart/spec.md"]), "## Purpose\nThe cart holds what a visitor is about to buy.\n\n## ADDED Requirements\n") {
		t.Errorf("the delta of a new capability lacks its Purpose:\n%s", files["specs/cart/spec.md"])
	}
	spec := fold(t, nil, map[string][]byte{"specs/cart/spec.md": files["specs/cart/spec.md"]})[LivingSpecsDir+"/cart/spec.md"]
	if !strings.HasPrefix(string(spec), "# cart Specification\n\n## Purpose\nThe cart holds what a visitor is about to buy.\n\n## Requirements\n") {
		t.Errorf("the new living spec does not carry the delta's Purpose:\n%s", spec)
	}
}

func TestPurposes(t *testing.T) {
	reqs := parseLoopSpec(t)
	sources := map[string][]byte{"docs/spec.md": []byte(loopSpec)}
	got := Purposes(reqs, Compare(reqs, nil), map[string]bool{}, sources)
	want := map[string]string{
		"cart":     "The cart holds what a visitor is about to buy. Its requirements: Add an item; Empty the cart; Cart total.",
		"checkout": "The checkout capability, as the requirements of the spec describe it: Pay.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Purposes (-want +got):\n%s", diff)
	}
	if got := Purposes(reqs, Compare(reqs, nil), map[string]bool{"cart": true, "checkout": true}, sources); len(got) != 0 {
		t.Errorf("Purposes of capabilities main has: %v, want none", got)
	}
}

func TestWriteChangeFolder(t *testing.T) {
	root := t.TempDir()
	stale := filepath.Join(root, "openspec", "changes", "c", "specs", "old", "spec.md")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"proposal.md": []byte("p\n"), "specs/new/spec.md": []byte("d\n")}
	if err := WriteChangeFolder(root, "c", files); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a file the folder no longer has is left: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(root, "openspec", "changes", "c", "specs", "new", "spec.md")); err != nil || string(data) != "d\n" {
		t.Errorf("specs/new/spec.md = %q, %v", data, err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "openspec", "changes", "c", "specs", "link")); err != nil {
		t.Fatal(err)
	}
	if err := WriteChangeFolder(root, "c", files); err == nil || !strings.Contains(err.Error(), "openspec/changes/c/specs/link is a symbolic link") {
		t.Errorf("a link in the folder: %v", err)
	}
}

// TestWriteDeltaSpecs: only specs/ is replaced; proposal.md, tasks.md and
// what else the folder holds stay as they are.
func TestWriteDeltaSpecs(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "openspec", "changes", "c")
	if err := WriteChangeFolder(root, "c", map[string][]byte{
		"proposal.md": []byte("refined\n"), "tasks.md": []byte("- [x] done\n"), "design.md": []byte("the agent's\n"),
		"specs/old/spec.md": []byte("stale\n"), "specs/links/spec.md": []byte("## Purpose\nold\n"),
	}); err != nil {
		t.Fatal(err)
	}
	if err := WriteDeltaSpecs(root, "c", map[string][]byte{
		"proposal.md": []byte("set's\n"), "tasks.md": []byte("set's\n"), "specs/links/spec.md": []byte("## ADDED Requirements\n"),
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"proposal.md": "refined\n", "tasks.md": "- [x] done\n", "design.md": "the agent's\n",
		"specs/links/spec.md": "## ADDED Requirements\n",
	}
	got := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			data, _ := os.ReadFile(p)
			got[filepath.ToSlash(rel)] = string(data)
		}
		return err
	})
	if !maps.Equal(got, want) {
		t.Errorf("folder = %v, want %v", got, want)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "specs", "link")); err != nil {
		t.Fatal(err)
	}
	if err := WriteDeltaSpecs(root, "c", nil); err == nil || !strings.Contains(err.Error(), "openspec/changes/c/specs/link is a symbolic link") {
		t.Errorf("a link in specs/: %v", err)
	}
}
