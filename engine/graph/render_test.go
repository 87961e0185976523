package graph

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/fatih/color"
	"github.com/hexops/autogold/v2"

	"github.com/set-engine/set/engine/config"
)

func fixtureGraph(t *testing.T) *Graph {
	t.Helper()
	g, err := Build(fixturePlan(), fixtureConfig())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func render(t *testing.T, f func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestText(t *testing.T) {
	g := fixtureGraph(t)
	got := render(t, func(b *bytes.Buffer) error { return Text(b, g, TextOptions{}) })
	if strings.Contains(got, "\x1b[") {
		t.Error("Text without Color wrote an escape sequence")
	}
	for _, line := range strings.Split(got, "\n") {
		if n := len([]rune(line)); n > textWidth {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	autogold.ExpectFile(t, autogold.Raw(got))
}

func TestTextColor(t *testing.T) {
	// Colour follows the option, not the package-level switch, and the
	// switch is left alone.
	old := color.NoColor
	color.NoColor = true
	t.Cleanup(func() { color.NoColor = old })

	g := fixtureGraph(t)
	got := render(t, func(b *bytes.Buffer) error { return Text(b, g, TextOptions{Color: true}) })
	if !strings.Contains(got, "\x1b[") {
		t.Error("Text with Color wrote no escape sequence")
	}
	if !color.NoColor {
		t.Error("Text changed color.NoColor")
	}
	plain := render(t, func(b *bytes.Buffer) error { return Text(b, g, TextOptions{}) })
	if stripped := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(got, ""); stripped != plain {
		t.Errorf("coloured text without its escapes differs from plain text:\n%s", stripped)
	}
	autogold.ExpectFile(t, autogold.Raw(got))
}

func TestDOT(t *testing.T) {
	g := fixtureGraph(t)
	autogold.ExpectFile(t, autogold.Raw(render(t, func(b *bytes.Buffer) error { return DOT(b, g, DrawOptions{}) })))
}

func TestDOTDetail(t *testing.T) {
	g := fixtureGraph(t)
	autogold.ExpectFile(t, autogold.Raw(render(t, func(b *bytes.Buffer) error { return DOT(b, g, DrawOptions{Detail: true}) })))
}

func TestMermaid(t *testing.T) {
	g := fixtureGraph(t)
	autogold.ExpectFile(t, autogold.Raw(render(t, func(b *bytes.Buffer) error { return Mermaid(b, g, DrawOptions{}) })))
}

func TestMermaidDetail(t *testing.T) {
	g := fixtureGraph(t)
	autogold.ExpectFile(t, autogold.Raw(render(t, func(b *bytes.Buffer) error { return Mermaid(b, g, DrawOptions{Detail: true}) })))
}

func TestJSON(t *testing.T) {
	g := fixtureGraph(t)
	got := render(t, func(b *bytes.Buffer) error { return JSON(b, g) })
	var back Graph
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatal(err)
	}
	again := render(t, func(b *bytes.Buffer) error { return JSON(b, &back) })
	if again != got {
		t.Error("JSON does not round-trip")
	}
	autogold.ExpectFile(t, autogold.Raw(got))
}

// TestDrawNamesTheMainBranch: the drawings name the project's main branch
// where main moves, in both forms.
func TestDrawNamesTheMainBranch(t *testing.T) {
	cfg := fixtureConfig()
	cfg.MainBranch = "master"
	g, err := Build(fixturePlan(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	mainWord := regexp.MustCompile(`\bmain\b`)
	for name, draw := range map[string]func(*bytes.Buffer) error{
		"dot":            func(b *bytes.Buffer) error { return DOT(b, g, DrawOptions{}) },
		"mermaid":        func(b *bytes.Buffer) error { return Mermaid(b, g, DrawOptions{}) },
		"dot detail":     func(b *bytes.Buffer) error { return DOT(b, g, DrawOptions{Detail: true}) },
		"mermaid detail": func(b *bytes.Buffer) error { return Mermaid(b, g, DrawOptions{Detail: true}) },
	} {
		got := render(t, draw)
		want := []string{"integration → master"}
		if strings.HasSuffix(name, "detail") {
			want = []string{"integrate master", "fast-forward master"}
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
		if mainWord.MatchString(got) {
			t.Errorf("%s names main:\n%s", name, got)
		}
	}
}

// TestRenderDeterministic renders every format many times: map iteration
// order must never leak into the output.
func TestRenderDeterministic(t *testing.T) {
	renderers := map[string]func(*bytes.Buffer, *Graph) error{
		"text":           func(b *bytes.Buffer, g *Graph) error { return Text(b, g, TextOptions{Color: true}) },
		"dot":            func(b *bytes.Buffer, g *Graph) error { return DOT(b, g, DrawOptions{}) },
		"dot detail":     func(b *bytes.Buffer, g *Graph) error { return DOT(b, g, DrawOptions{Detail: true}) },
		"mermaid":        func(b *bytes.Buffer, g *Graph) error { return Mermaid(b, g, DrawOptions{}) },
		"mermaid detail": func(b *bytes.Buffer, g *Graph) error { return Mermaid(b, g, DrawOptions{Detail: true}) },
		"json":           func(b *bytes.Buffer, g *Graph) error { return JSON(b, g) },
		"markdown":       func(b *bytes.Buffer, g *Graph) error { return Markdown(b, g) },
	}
	for name, r := range renderers {
		first := render(t, func(b *bytes.Buffer) error { return r(b, fixtureGraph(t)) })
		for range 20 {
			if got := render(t, func(b *bytes.Buffer) error { return r(b, fixtureGraph(t)) }); got != first {
				t.Fatalf("%s output differs between runs", name)
			}
		}
	}
}

// awkwardGraph has names that need escaping in every format.
func awkwardGraph(t *testing.T) *Graph {
	t.Helper()
	cfg := fixtureConfig()
	g := cfg.Gates["e2e"]
	g.When = `any(files, {# matches "a\\\\b" || # contains "<x>"})`
	g.Mode = "warn"
	cfg.Gates[`odd"gate`] = g
	cfg.Gates["odd-gate"] = g
	cfg.Gates["odd_gate"] = g
	cfg.Stacks["feature"] = config.Stack{`odd"gate`: {}, "odd-gate": {}, "odd_gate": {}, "build": {}}
	out, err := Build(fixturePlan(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMermaidIDs(t *testing.T) {
	for _, opts := range []DrawOptions{{}, {Detail: true}} {
		testMermaidIDs(t, render(t, func(b *bytes.Buffer) error { return Mermaid(b, awkwardGraph(t), opts) }))
	}
}

func testMermaidIDs(t *testing.T, got string) {
	t.Helper()
	idRE := regexp.MustCompile(`^\s+(\S+?)(\[|\{\{)"`)
	seen := map[string]bool{}
	for _, line := range strings.Split(got, "\n") {
		m := idRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if !regexp.MustCompile(`^[A-Za-z0-9_]+$`).MatchString(m[1]) {
			t.Errorf("ID %q is not sanitised", m[1])
		}
		if seen[m[1]] {
			t.Errorf("ID %q declared twice", m[1])
		}
		seen[m[1]] = true
		label := strings.ReplaceAll(strings.TrimPrefix(line[len(m[0])-1:], `"`), "<br/>", "\n")
		if i := strings.LastIndex(label, `"`); i >= 0 && strings.ContainsAny(label[:i], `"<>`) {
			t.Errorf("label not escaped: %s", line)
		}
	}
	if !strings.Contains(got, "odd#quot;gate") {
		t.Errorf("quote in a label not written as #quot;:\n%s", got)
	}
}

func TestDOTAcceptedByGraphviz(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("graphviz dot not installed")
	}
	for _, tc := range []struct {
		name string
		g    *Graph
		opts DrawOptions
	}{
		{"fixture", fixtureGraph(t), DrawOptions{}},
		{"fixture, detail", fixtureGraph(t), DrawOptions{Detail: true}},
		{"awkward", awkwardGraph(t), DrawOptions{}},
		{"awkward, detail", awkwardGraph(t), DrawOptions{Detail: true}},
	} {
		name, g := tc.name, tc.g
		src := render(t, func(b *bytes.Buffer) error { return DOT(b, g, tc.opts) })
		cmd := exec.Command(dot, "-Tsvg")
		cmd.Stdin = strings.NewReader(src)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("%s: dot -Tsvg: %v\n%s\n%s", name, err, stderr.String(), src)
		}
		if !bytes.Contains(out, []byte("<svg")) {
			t.Errorf("%s: dot -Tsvg wrote no SVG", name)
		}
		// Every change is a cluster, every escaped label survives.
		for _, c := range g.Changes {
			if !bytes.Contains(out, []byte("cluster_"+c.Name)) {
				t.Errorf("%s: SVG lacks cluster_%s", name, c.Name)
			}
		}
	}
}

func TestTextPerChangeIntegration(t *testing.T) {
	// lint only runs for changes bigger than S, so the integration stacks
	// differ and each change shows its own.
	cfg := fixtureConfig()
	cfg.Integration["lint"] = config.StackEntry{}
	g, err := Build(fixturePlan(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := render(t, func(b *bytes.Buffer) error { return Text(b, g, TextOptions{}) })
	for _, want := range []string{
		"\n    integration   build → lint → vet → test\n",
		"\n    integration   build → vet → test\n",
		`integration/lint (when: change.size != "S" is false)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Text lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "every change") {
		t.Errorf("Text shows a shared integration stack:\n%s", got)
	}
}

func TestMarkdown(t *testing.T) {
	g := fixtureGraph(t)
	autogold.ExpectFile(t, autogold.Raw(render(t, func(b *bytes.Buffer) error { return Markdown(b, g) })))
}

// TestMarkdownEscapes: names and conditions with markdown's own
// characters come out as code spans or escaped, never as markup; the
// change table keeps one cell per column on every row.
func TestMarkdownEscapes(t *testing.T) {
	g := awkwardGraph(t)
	g.Project = "my_app*"
	got := render(t, func(b *bytes.Buffer) error { return Markdown(b, g) })
	for _, want := range []string{
		"### Plan for my\\_app\\*: ",
		"`odd_gate`?(warn)",
		"`odd\"gate`?(warn)",
		"- `odd_gate` when `any(files, {# matches \"a\\\\\\\\b\" || # contains \"<x>\"})`",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	var cols int
	for _, line := range strings.Split(got, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		n := strings.Count(line, "|") - strings.Count(line, `\|`)
		if cols == 0 {
			cols = n
		} else if n != cols {
			t.Errorf("table row of %d cells where the header has %d: %s", n-1, cols-1, line)
		}
	}
	if cols == 0 {
		t.Errorf("no table:\n%s", got)
	}
}
