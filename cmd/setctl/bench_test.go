package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/config/decode"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/load"
)

// benchProject writes a golang-profile project whose spec has n
// requirements over n/20 domains; every requirement after a domain's first
// depends on its predecessor, and each domain's first on the previous
// domain's first, so the plan has cross-change edges.
func benchProject(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	b.Setenv("CUE_CACHE_DIR", filepath.Join(b.TempDir(), "cue-cache"))
	b.Setenv("CUE_REGISTRY", "none")
	files := map[string]string{
		"cue.mod/module.cue": "module: \"example.com/bench@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"github.com/set-engine/set@v0\": v: \"v0.1.0\"\n",
		"set.cue": `package bench

import "github.com/set-engine/set/profiles/golang"

project: golang.#Project & {
	name: "bench"
	spec: ["docs/spec.md"]
	gates: test: run: ["go", "test", "-race", "./..."]
	stacks: feature: fmt: mode: "warn"
}
`,
	}
	var spec strings.Builder
	spec.WriteString("# Generated spec\n\n")
	const perDomain = 20
	for i := range n {
		d, k := i/perDomain, i%perDomain+1
		if k == 1 {
			fmt.Fprintf(&spec, "## Domain %d\n\n", d)
		}
		fmt.Fprintf(&spec, "### REQ-D%d-%02d: Requirement %d of domain %d\n", d, k, k, d)
		fmt.Fprintf(&spec, "The system does thing %d.\n\n", i)
		switch {
		case k > 1:
			fmt.Fprintf(&spec, "Depends on: REQ-D%d-%02d\n\n", d, k-1)
		case d > 0:
			fmt.Fprintf(&spec, "Depends on: REQ-D%d-01\n\n", d-1)
		}
		for s := range 1 + i%3 {
			fmt.Fprintf(&spec, "#### Scenario: case %d\n- **WHEN** input %d arrives\n- **THEN** output %d is produced\n\n", s, s, s)
		}
	}
	files["docs/spec.md"] = spec.String()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkPlan500 measures the whole planning path on a 500-requirement
// spec: CUE load and decode, spec parsing, static planning, validation,
// fingerprint and the execution graph. Target: under 1 s.
func BenchmarkPlan500(b *testing.B) {
	dir := benchProject(b, 500)
	b.ReportAllocs()
	for b.Loop() {
		ws, err := loadWorkspace(dir)
		if err != nil {
			b.Fatal(load.Details(err, dir))
		}
		p, err := ws.proj.MakePlan(context.Background())
		if err != nil {
			b.Fatal(load.Details(err, dir))
		}
		g, err := graph.Build(p, ws.cfg)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Changes) != 100 || len(g.Changes) != 100 {
			b.Fatalf("got %d changes, want 100 (25 domains of 20, at most 6 each)", len(p.Changes))
		}
	}
}

// BenchmarkLoadConfig measures loading and decoding a profile-based
// set.cue (the embedded module already extracted). Target: under 300 ms.
func BenchmarkLoadConfig(b *testing.B) {
	dir := benchProject(b, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := decode.Load(dir, load.Options{}); err != nil {
			b.Fatal(load.Details(err, dir))
		}
	}
}
