package config_test

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// cueFront are the engine's packages that may link CUE: the loader, the
// decoder, and project, the prepare step that runs them before anything
// else (load → spec → plan → graph) for the CLI, and learncue, which
// writes the learnings setctl learn proposes as CUE source. Every other
// package takes a config.Project.
var cueFront = []string{
	"github.com/set-engine/set/engine/load",
	"github.com/set-engine/set/engine/config/decode",
	"github.com/set-engine/set/engine/project",
	"github.com/set-engine/set/engine/learn/learncue",
}

// TestStagesLinkNoCUE: of the engine's packages, only the CUE front links
// a cuelang.org package; the stages that run a plan (gate, agent, merge,
// orchestrator, …) do not.
func TestStagesLinkNoCUE(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the packages' dependencies")
	}
	out, err := exec.Command(gobin, "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "github.com/set-engine/set/engine/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	linksCUE := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		pkg, deps, _ := strings.Cut(strings.TrimSpace(line), " ")
		linksCUE[pkg] = slices.ContainsFunc(strings.Fields(deps), func(d string) bool { return strings.HasPrefix(d, "cuelang.org/") })
	}
	for _, front := range cueFront {
		if !linksCUE[front] {
			t.Errorf("%s does not link CUE: is the check blind, or does the front list need updating?", front)
		}
	}
	if _, ok := linksCUE["github.com/set-engine/set/engine/orchestrator"]; !ok {
		t.Fatalf("go list did not list engine/orchestrator:\n%s", out)
	}
	for _, pkg := range slices.Sorted(maps.Keys(linksCUE)) {
		if linksCUE[pkg] && !slices.Contains(cueFront, pkg) {
			t.Errorf("%s links CUE; only %s may (take a config.Project instead)", pkg, strings.Join(cueFront, ", "))
		}
	}
}
