package main

import (
	"path/filepath"
	"testing"
)

// TestDashboardProjectNames: the dashboard names a project as its set.cue
// does, not after its directory; a project whose set.cue does not load
// (it still has runs to show) is named after its directory.
func TestDashboardProjectNames(t *testing.T) {
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"shop/cue.mod/module.cue": `module: "example.com/shop@v0"
language: version: "v0.17.0"
deps: "github.com/set-engine/set@v0": v: "v0.1.0"
`,
		"shop/set.cue": `package shop

import "github.com/set-engine/set/profiles/golang"

project: golang.#Project & {
	name: "storefront"
	spec: ["docs/spec.md"]
}
`,
		"billing/cue.mod/module.cue": "module: \"example.com/billing@v0\"\nlanguage: version: \"v0.17.0\"\n",
		"billing/set.cue":            "package billing\n",
	})
	projects, err := dashboardProjects(dir, []string{"shop", "billing"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range projects {
		names = append(names, p.Name)
	}
	if len(names) != 2 || names[0] != "storefront" || names[1] != "billing" {
		t.Errorf("names %q, want [storefront billing]", names)
	}
	if got, want := projectNames(projects[:1]), "storefront ("+filepath.Join(dir, "shop")+")"; got != want {
		t.Errorf("projectNames = %q, want %q", got, want)
	}
}

// TestDashboardForge: a project that delivers by pull request to GitHub
// gives the dashboard its repository's pages, named in set.cue or read
// from the remote's URL; one without a forge gives none.
func TestDashboardForge(t *testing.T) {
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	dir := t.TempDir()
	module := "module: \"example.com/shop@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"github.com/set-engine/set@v0\": v: \"v0.1.0\"\n"
	project := func(delivery string) string {
		return "package shop\n\nimport \"github.com/set-engine/set/profiles/golang\"\n\nproject: golang.#Project & {\n\tname: \"shop\"\n\tspec: [\"docs/spec.md\"]\n" + delivery + "}\n"
	}
	writeFiles(t, dir, map[string]string{
		"named/cue.mod/module.cue":  module,
		"named/set.cue":             project("\tdelivery: {mode: \"pull-request\", forge: {repository: \"acme/shop\", apiURL: \"https://ghe.example/api/v3\"}}\n"),
		"remote/cue.mod/module.cue": module,
		"remote/set.cue":            project("\tdelivery: {mode: \"pull-request\", forge: {}}\n"),
		"local/cue.mod/module.cue":  module,
		"local/set.cue":             project(""),
	})
	gitIn(t, filepath.Join(dir, "remote"), "init", "-q")
	gitIn(t, filepath.Join(dir, "remote"), "remote", "add", "origin", "git@github.com:acme/remote-shop.git")
	for root, want := range map[string]string{
		"named":  "https://ghe.example/acme/shop",
		"remote": "https://github.com/acme/remote-shop",
		"local":  "",
	} {
		p := dashboardProject(filepath.Join(dir, root), "")
		got := ""
		if p.Forge != nil {
			got = p.Forge.Repository
		}
		if got != want {
			t.Errorf("%s: forge %q, want %q", root, got, want)
		}
	}
}
