package plan

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/openspec"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/internal/clitest"
)

// TestFolderOrderCLI holds the openspec strategy's dependencies to the
// real OpenSpec CLI (1.13.2): `openspec archive NAME --yes` run on every
// folder in the plan's order archives each, and for every dependency the
// planner found in the deltas (not a depends_on), archiving the dependent
// first is refused. So an order the plan allows is one OpenSpec takes, and
// every order it forbids is one OpenSpec refuses.
func TestFolderOrderCLI(t *testing.T) {
	cli := clitest.OpenSpec.Require(t)
	living := "# links Specification\n\n## Purpose\nShort links that redirect to long URLs for sharing.\n\n## Requirements\n" +
		"### Requirement: Open a short link\nThe system SHALL redirect a short link to its URL.\n\n#### Scenario: Open\n- **WHEN** a short link is opened\n- **THEN** it redirects\n"
	meta := "schema: spec-driven\ncreated: 2026-11-27\n"
	for _, tc := range []struct {
		name  string
		tree  openspec.Tree
		edges int // the dependencies found in the deltas
	}{{
		name: "ADDED then MODIFIED",
		tree: tree(
			"openspec/changes/add-links/.openspec.yaml", meta,
			"openspec/changes/add-links/specs/links/spec.md", addedLinks+"\n### Requirement: Count clicks\nThe system SHALL count the clicks on a short link.\n\n#### Scenario: Count\n- **WHEN** a short link is opened\n- **THEN** its count goes up\n",
			"openspec/changes/edit-links/.openspec.yaml", meta,
			"openspec/changes/edit-links/specs/links/spec.md", modifiedLinks,
			"openspec/changes/drop-links/specs/links/spec.md", "## REMOVED Requirements\n\n### Requirement: Create a short link\n",
			"openspec/changes/drop-links/.openspec.yaml", meta+"depends_on: [edit-links]\n",
		),
		edges: 2,
	}, {
		name: "RENAMED away, ADDED again, MODIFIED under the new name",
		tree: tree(
			"openspec/specs/links/spec.md", living,
			"openspec/changes/rename-open/.openspec.yaml", meta,
			"openspec/changes/rename-open/specs/links/spec.md", "## RENAMED Requirements\n- FROM: `### Requirement: Open a short link`\n- TO: `### Requirement: Follow a short link`\n",
			"openspec/changes/reopen/.openspec.yaml", meta,
			"openspec/changes/reopen/specs/links/spec.md", "## ADDED Requirements\n\n### Requirement: Open a short link\nThe system SHALL open a short link in a preview first.\n\n#### Scenario: Preview\n- **WHEN** a short link is opened\n- **THEN** a preview shows\n",
			"openspec/changes/tune-follow/.openspec.yaml", meta,
			"openspec/changes/tune-follow/specs/links/spec.md", "## MODIFIED Requirements\n\n### Requirement: Follow a short link\nThe system SHALL redirect a short link to its URL with a 301.\n\n#### Scenario: Open\n- **WHEN** a short link is opened\n- **THEN** it redirects\n",
		),
		edges: 2,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Project{Name: "linkshort", Planner: config.Planner{Strategy: config.StrategyOpenSpec}}
			p, err := MakeWith(context.Background(), cfg, &spec.Spec{}, Record{OpenSpec: tc.tree}, Fingerprint{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			root := writeTree(t, tc.tree)
			for _, c := range p.Changes {
				if out, ok := archiveCLI(t, cli, root, c.Name); !ok {
					t.Errorf("openspec archive %s --yes in the plan's order refused:\n%s", c.Name, out)
				}
			}
			edges := 0
			for _, c := range p.Changes {
				for dep, why := range c.Because {
					if bytes.HasPrefix([]byte(why), []byte("depends_on")) {
						continue
					}
					edges++
					root := writeTree(t, tc.tree)
					if out, ok := archiveCLI(t, cli, root, c.Name); ok {
						t.Errorf("%s after %s (%s), but openspec archive %s --yes before it succeeded:\n%s", c.Name, dep, why, c.Name, out)
					}
				}
			}
			if edges != tc.edges {
				t.Errorf("%d dependencies found in the deltas, want %d: %+v", edges, tc.edges, p.Changes)
			}
		})
	}
}

func writeTree(t *testing.T, tr openspec.Tree) string {
	t.Helper()
	root := t.TempDir()
	for p, data := range tr {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// archiveCLI runs `openspec archive change --yes` in root; ok when it
// archived the change: it exited 0 without saying "Aborted".
func archiveCLI(t *testing.T, cli, root, change string) ([]byte, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "archive", change, "--yes")
	cmd.Dir = root
	cmd.Env = clitest.OpenSpecEnv(t.TempDir())
	out, err := cmd.CombinedOutput()
	return out, err == nil && !bytes.Contains(out, []byte("Aborted"))
}
