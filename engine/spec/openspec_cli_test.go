package spec

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/internal/clitest"
)

// TestOpenSpecValidatesWhatSetWrites: `openspec validate --all --strict`
// accepts the living specs set folds from a spec whose requirements say
// SHALL or MUST, and a change folder with ADDED, MODIFIED, REMOVED and
// RENAMED requirements against them.
func TestOpenSpecValidatesWhatSetWrites(t *testing.T) {
	cli := clitest.OpenSpec.Require(t)
	src := strings.NewReplacer(
		"### REQ-CART-02: Empty the cart\n", "### REQ-CART-02: Empty the cart\nThe cart SHALL empty on request.\n",
		"## Checkout\n", "## Checkout\nPaying for the cart and shipping what was paid for.\n",
	).Replace(loopSpec)
	reqs, _ := Parse("docs/spec.md", []byte(src), Options{})
	sts := Compare(reqs, nil)
	var first []ChangeRequirement
	for i, r := range reqs {
		first = append(first, ChangeRequirement{Standing: sts[i], Requirement: r})
	}
	purposes := Purposes(reqs, sts, nil, map[string][]byte{"docs/spec.md": []byte(src)})
	living := fold(t, nil, ChangeFolder(ChangeFolderInput{Change: "first", Requirements: first, Purposes: purposes}))

	edited := strings.NewReplacer(
		"- THEN it holds nothing", "- THEN it holds nothing at all",
		"Cart total", "Cart sum",
		"### REQ-CART-01: Add an item", "### REQ-CART-04: Remove an item\nAn item SHALL leave the cart on request.\n- WHEN removed\n- THEN gone\n\n### REQ-CART-01: Add an item",
		"### Requirement: Pay", "### REQ-CHECKOUT-02: Ship\nWhat was paid for SHALL ship.\n- WHEN paid\n- THEN shipped\n\n### Requirement: Pay",
	).Replace(src)
	edited = edited[:strings.Index(edited, "### Requirement: Pay")] // REQ-CHECKOUT-01 removed
	next, _ := Parse("docs/spec.md", []byte(edited), Options{})
	l, err := ParseLiving(living)
	if err != nil {
		t.Fatal(err)
	}
	content := map[string]Requirement{}
	for _, r := range l {
		content[r.ID] = r.Requirement
	}
	for _, r := range next {
		content[r.ID] = r
	}
	var crs []ChangeRequirement
	for _, st := range Compare(next, l) {
		crs = append(crs, ChangeRequirement{Standing: st, Requirement: content[st.ID]})
	}
	if got := statusLine(Compare(next, l)); got != "REQ-CART-04=new@cart REQ-CART-01=implemented@cart REQ-CART-02=changed@cart(scenarios) REQ-CART-03=changed@cart(title) REQ-CHECKOUT-02=new@checkout REQ-CHECKOUT-01=removed@checkout" {
		t.Fatalf("standings: %s", got)
	}

	root := t.TempDir()
	for name, data := range living {
		writeFile(t, filepath.Join(root, filepath.FromSlash(name)), data)
	}
	if err := WriteChangeFolder(root, "edit", ChangeFolder(ChangeFolderInput{Change: "edit", SpecFiles: []string{"docs/spec.md"}, Requirements: crs})); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli, "validate", "--all", "--strict", "--no-interactive")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "OPENSPEC_TELEMETRY=0", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Totals: 3 passed, 0 failed (3 items)") {
		t.Errorf("openspec validate --all --strict: %v\n%s", err, out)
	}
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
