package decode

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/internal/modeltest"
)

func modelTables(t *testing.T) config.ModelTables {
	t.Helper()
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	tables, err := ModelTables(load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tables
}

// No default model of a stdlib agent preset is one its CLI marks
// deprecated, retired or superseded, or does not list as current.
func TestStdlibDefaultModelsAreCurrent(t *testing.T) {
	tables := modelTables(t)
	v, err := load.Stdlib(load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	presets, err := v.LookupPath(cue.ParsePath("agents")).Fields()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for presets.Next() {
		preset := presets.Selector().String()
		adapter, _ := presets.Value().LookupPath(cue.ParsePath("adapter")).String()
		roles, err := presets.Value().LookupPath(cue.ParsePath("models")).Fields(cue.Optional(true))
		if err != nil {
			t.Fatal(err)
		}
		for roles.Next() {
			def, ok := roles.Value().Default()
			model, err := def.String()
			if !ok || err != nil {
				t.Errorf("agents.%s.models.%s has no default model", preset, roles.Selector())
				continue
			}
			st, listed := tables[adapter].Models[model]
			if !listed || st.Status != config.ModelCurrent {
				t.Errorf("agents.%s.models.%s defaults to %s, which %s marks %q", preset, roles.Selector(), model, tables[adapter].CLI, st.Status)
			}
			checked++
		}
	}
	if checked < 2 {
		t.Fatalf("checked %d default models: is the walk blind?", checked)
	}
}

// The tables name the CLI versions the tests run and .ci/run installs.
func TestModelTablesNameThePinnedCLIs(t *testing.T) {
	tables := modelTables(t)
	want := map[string]string{
		"claude": modeltest.ClaudeCodePackage + "@" + modeltest.ClaudeCodeVersion,
		"codex":  modeltest.CodexPackage + "@" + modeltest.CodexVersion,
	}
	ci, err := os.ReadFile("../../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for adapter, cli := range want {
		if tables[adapter].CLI != cli {
			t.Errorf("modelTables.%s.cli = %q, want %q", adapter, tables[adapter].CLI, cli)
		}
		if !bytes.Contains(ci, []byte(cli+" </dev/null")) {
			t.Errorf(".ci/run does not install %s", cli)
		}
	}
}

// claudeRetiring matches an entry of Claude Code's table of the models it
// retires, as its binary holds it.
var claudeRetiring = regexp.MustCompile(`\{family:"([^"]+)",name:"[^"]*",ids:\[([^\]]*)\],status:"(\w+)",date:"([0-9-]+)",current:"(\w+)_ID"\}`)

// claudeAlias matches the default model of an alias after
// provider_alias_targets in Claude Code's binary.
var claudeAlias = regexp.MustCompile(`(opus|sonnet|haiku):\{default:"([^"]+)"`)

// The claude table is Claude Code's own, read from the pinned CLI's
// binary: the same models with the same status, date and replacement, and
// the same current model per alias.
func TestModelTablesMatchClaudeCode(t *testing.T) {
	cli := modeltest.ClaudeCLI(t)
	tables := modelTables(t)
	out, err := exec.Command(cli, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), modeltest.ClaudeCodeVersion+" ") {
		t.Fatalf("%s --version: %s, want %s", cli, out, modeltest.ClaudeCodeVersion)
	}
	bin, err := filepath.EvalSymlinks(cli)
	if err != nil {
		t.Fatal(err)
	}
	retiring, aliases := scanClaudeBinary(t, bin)
	if len(retiring) < 5 || len(aliases) != 3 {
		t.Fatalf("found %d retiring families and aliases %v in %s: has the binary's layout changed?", len(retiring), aliases, bin)
	}
	want := config.ModelTable{CLI: tables["claude"].CLI, Current: aliases, Models: map[string]config.ModelStatus{}}
	for _, id := range aliases {
		want.Models[id] = config.ModelStatus{Status: config.ModelCurrent}
	}
	for _, m := range retiring {
		ids := strings.Split(strings.ReplaceAll(m[2], `"`, ""), ",")
		for _, id := range ids {
			want.Models[id] = config.ModelStatus{Status: m[3], Date: m[4], Use: aliases[strings.ToLower(m[5])]}
		}
	}
	if diff := cmp.Diff(want, tables["claude"]); diff != "" {
		t.Errorf("stdlib/models.cue modelTables.claude differs from %s's own table (-cli +stdlib):\n%s", bin, diff)
	}
}

// scanClaudeBinary reads Claude Code's table of retiring models (each
// match of claudeRetiring, by family) and its aliases' current models
// from the binary, in chunks that overlap by more than a table.
func scanClaudeBinary(t *testing.T, path string) (map[string][]string, map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const chunk, overlap = 8 << 20, 64 << 10
	retiring, aliases := map[string][]string{}, map[string]string{}
	buf := make([]byte, 0, chunk+overlap)
	for {
		n, err := io.ReadFull(f, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		for _, m := range claudeRetiring.FindAllStringSubmatch(string(buf), -1) {
			retiring[m[1]] = m
		}
		if i := bytes.Index(buf, []byte("provider_alias_targets:{")); i >= 0 && len(aliases) == 0 && len(buf)-i > 2000 {
			for _, m := range claudeAlias.FindAllSubmatch(buf[i:i+2000], -1) {
				if _, seen := aliases[string(m[1])]; !seen {
					aliases[string(m[1])] = string(m[2])
				}
			}
		}
		if err != nil {
			break
		}
		buf = append(buf[:0], buf[len(buf)-overlap:]...)
	}
	return retiring, aliases
}

// The codex table is Codex's bundled catalog, as `codex debug models
// --bundled` prints it: every model, the upgrade it suggests for the older
// ones, and its default, the first of its listed models.
func TestModelTablesMatchCodex(t *testing.T) {
	cli := modeltest.CodexCLI(t)
	tables := modelTables(t)
	home := t.TempDir()
	cmd := exec.Command(cli, "debug", "models", "--bundled")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + home}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("codex debug models --bundled: %v", err)
	}
	var catalog struct {
		Models []struct {
			Slug       string `json:"slug"`
			Visibility string `json:"visibility"`
			Priority   int    `json:"priority"`
			Upgrade    *struct {
				Model string `json:"model"`
			} `json:"upgrade"`
		} `json:"models"`
	}
	if err := json.Unmarshal(out, &catalog); err != nil {
		t.Fatal(err)
	}
	want := config.ModelTable{CLI: tables["codex"].CLI, ListsAll: true, Models: map[string]config.ModelStatus{}}
	first := -1
	for i, m := range catalog.Models {
		st := config.ModelStatus{Status: config.ModelCurrent}
		if m.Upgrade != nil {
			st = config.ModelStatus{Status: config.ModelSuperseded, Use: m.Upgrade.Model}
		}
		want.Models[m.Slug] = st
		if m.Visibility == "list" && (first < 0 || m.Priority < catalog.Models[first].Priority) {
			first = i
		}
	}
	if first < 0 {
		t.Fatal("the catalog lists no model")
	}
	want.Current = map[string]string{"default": catalog.Models[first].Slug}
	if diff := cmp.Diff(want, tables["codex"]); diff != "" {
		t.Errorf("stdlib/models.cue modelTables.codex differs from the Codex catalog (-cli +stdlib):\n%s", diff)
	}
}
