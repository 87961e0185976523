package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// commandsPage is docs/commands.md: the command reference, generated
// from what setctl prints for --help.
var commandsPage = filepath.Join("..", "..", "docs", "commands.md")

// TestDocsCommands: docs/commands.md is the command reference as the
// binary prints it, `setctl --help` then `setctl COMMAND --help` for every
// command, so that it cannot drift from the flags; go generate rewrites it.
func TestDocsCommands(t *testing.T) {
	want := commandReference(t)
	got, err := os.ReadFile(commandsPage)
	if err == nil && string(got) == want {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(commandsPage, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Errorf("docs/commands.md is stale: it is not what setctl prints for --help; run\n\tgo generate ./cmd/setctl")
}

// commandReference is the text of docs/commands.md.
func commandReference(t *testing.T) string {
	t.Helper()
	help := func(args ...string) string {
		var stdout, stderr bytes.Buffer
		if code := Main(args, testProcess(&stdout, &stderr)); code != exitOK {
			t.Fatalf("setctl %s exited %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		return stdout.String()
	}
	var b strings.Builder
	b.WriteString("<!-- generated from setctl's help texts by go generate ./cmd/setctl (TestDocsCommands); do not edit -->\n\n")
	b.WriteString("# Commands\n\n")
	b.WriteString("Every command of setctl, as `setctl COMMAND --help` prints it. The\n")
	b.WriteString("help topics have a page each, which holds `setctl help TOPIC`.\n\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "- [`setctl %s`](#setctl-%s): %s\n", c.name, c.name, c.summary)
	}
	for _, topic := range topics() {
		fmt.Fprintf(&b, "- [`setctl help %s`](%s.md): %s\n", topic.name, topic.name, topic.summary)
	}
	fmt.Fprintf(&b, "\n## setctl\n\n```text\n%s```\n", help("--help"))
	for _, c := range commands() {
		fmt.Fprintf(&b, "\n## setctl %s\n\n```text\n%s```\n", c.name, help(c.name, "--help"))
	}
	return b.String()
}

// TestDocsLifecycle: the lifecycle table of docs/architecture.md is the
// one engine/state's golden file pins (TestLifecycleGolden), so that the
// page changes with the lifecycle.
func TestDocsLifecycle(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("..", "..", "engine", "state", "testdata", "TestLifecycleGolden.golden"))
	if err != nil {
		t.Fatal(err)
	}
	page := docFile(t, "architecture.md")
	const marker = "TestDocsLifecycle) -->\n```text\n"
	_, rest, ok := strings.Cut(page, marker)
	if !ok {
		t.Fatalf("docs/architecture.md lacks the lifecycle's marker line ending %q", marker)
	}
	table, _, _ := strings.Cut(rest, "```\n")
	if want := strings.TrimSuffix(string(golden), "\n") + "\n"; table != want {
		t.Errorf("docs/architecture.md's lifecycle differs from engine/state's:\n%s\nengine/state:\n%s", table, want)
	}
}

// TestDocsArchitecture: docs/architecture.md describes every package of
// engine/ (a directory with Go code other than tests), by its path in
// backquotes, so that a new package gets its line.
func TestDocsArchitecture(t *testing.T) {
	page := docFile(t, "architecture.md")
	root := filepath.Join("..", "..")
	seen := 0
	err := filepath.WalkDir(filepath.Join(root, "engine"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "testdata") {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		pkg := "`" + filepath.ToSlash(rel) + "`"
		if !strings.Contains(page, pkg) {
			t.Errorf("docs/architecture.md does not describe %s", pkg)
			page += pkg // once per package
		}
		seen++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("found no Go file under engine/")
	}
}
