package spec

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/openspec"
	"github.com/set-engine/set/internal/clitest"
)

// purpose is a Purpose section long enough for openspec validate --strict.
const purpose = "## Purpose\nSign-up and login: who may use the application, and how they prove it.\n\n"

// signUp is a requirement openspec validate --strict accepts.
const signUp = "### Requirement: Sign up\nThe system SHALL create an account.\n\n#### Scenario: valid form\n- WHEN a visitor posts a valid form THEN an account is created\n"

func TestOpenSpecRules(t *testing.T) {
	const file = "openspec/specs/accounts/spec.md"
	for _, tc := range []struct {
		name, src, diags string
	}{{
		name: "a valid main spec, set's REQ-ID headings included",
		src: purpose + "## Requirements\n" + signUp +
			"\n### REQ-ACCOUNTS-09: Log in\nMembers MUST be able to log in.\n#### Scenario: right password\n- WHEN a member logs in THEN a session starts\n",
	}, {
		name: "no Purpose, no Requirements",
		src:  "# accounts\n\n## Sign up\n",
		diags: `
openspec/specs/accounts/spec.md: error: no "## Purpose" section: openspec validate requires one saying what the capability is for
openspec/specs/accounts/spec.md: error: no "## Requirements" section: openspec validate requires one holding the "### Requirement: <name>" headings
`,
	}, {
		name: "an empty Purpose, and a Requirements section without requirements",
		src:  "## Purpose\n\n## Requirements\nLater.\n",
		diags: `
openspec/specs/accounts/spec.md:1: error: "## Purpose" is empty: openspec validate requires it to say what the capability is for
openspec/specs/accounts/spec.md:3: error: "## Requirements" holds no requirement
`,
	}, {
		name: "a brief Purpose",
		src:  "## Purpose\nAccounts.\n\n## Requirements\n" + signUp,
		diags: `
openspec/specs/accounts/spec.md:1: error: "## Purpose" is too brief (9 characters; openspec validate --strict wants at least 50)
`,
	}, {
		name: "placeholder Purposes",
		src:  "## Purpose\nTODO - say who may use the application and how they prove it.\n## Requirements\n" + signUp,
		diags: `
openspec/specs/accounts/spec.md:1: error: "## Purpose" is a placeholder (TBD, TODO or the sentence openspec archive writes): say what the capability is for
`,
	}, {
		name: "the Purpose openspec archive writes",
		src:  "## Purpose\nTBD - created by archiving change add-accounts. Update Purpose after archive.\n## Requirements\n" + signUp,
		diags: `
openspec/specs/accounts/spec.md:1: error: "## Purpose" is a placeholder (TBD, TODO or the sentence openspec archive writes): say what the capability is for
`,
	}, {
		name: "scenarios are headings with content under the requirement",
		src: purpose + "## Requirements\n" +
			"### Requirement: Bullets\nThe system SHALL x.\n- Scenario: s\n  - WHEN a THEN b\n" +
			"### Requirement: Empty heading\nThe system SHALL x.\n#### Scenario: s\n" +
			"### Requirement: Sibling\nThe system SHALL x.\n### Scenario: s\n- WHEN a THEN b\n",
		diags: `
openspec/specs/accounts/spec.md:5: error: requirement "Bullets" has no scenario: openspec validate wants a "#### Scenario: <name>" heading with its steps under it
openspec/specs/accounts/spec.md:9: error: requirement "Empty heading" has no scenario: its scenario heading has nothing under it (add "- **WHEN** …" and "- **THEN** …")
openspec/specs/accounts/spec.md:11: warning: scenario "s" of requirement REQ-ACCOUNTS-02 has no WHEN/THEN steps
openspec/specs/accounts/spec.md:12: error: requirement "Sibling" has no scenario: openspec validate wants a "#### Scenario: <name>" heading with its steps under it
openspec/specs/accounts/spec.md:14: error: requirement "Scenario: s" has no scenario: openspec validate wants a "#### Scenario: <name>" heading with its steps under it
`,
	}, {
		name: "text with SHALL or MUST under a Requirement heading",
		src: purpose + "## Requirements\n" +
			"### Requirement: No text\n#### Scenario: s\n- WHEN a THEN b\n" +
			"### Requirement: Lower case\nThe system shall x.\n#### Scenario: s\n- WHEN a THEN b\n" +
			"### Requirement: The system SHALL x\nOnly the title says it.\n#### Scenario: s\n- WHEN a THEN b\n" +
			"### Requirement: Metadata\n**Rule**: The system MUST x.\n#### Scenario: s\n- WHEN a THEN b\n",
		diags: `
openspec/specs/accounts/spec.md:5: error: requirement "No text" has no text: say what the system SHALL or MUST do on the lines under its heading
openspec/specs/accounts/spec.md:8: error: requirement "Lower case" has no SHALL or MUST in its text (openspec validate --strict requires one)
openspec/specs/accounts/spec.md:12: error: requirement "The system SHALL x" has no SHALL or MUST in its text (openspec validate --strict requires one)
`,
	}, {
		name: "delta headers, requirements outside the section, duplicates",
		src: purpose + "## Requirements\n" + signUp + "### Requirement: Sign up ##\nThe system SHALL x.\n#### Scenario: s\n- WHEN a THEN b\n" +
			"## ADDED Requirements\n### Requirement: Log in\nMembers MUST log in.\n#### Scenario: s\n- WHEN a THEN b\n",
		diags: `
openspec/specs/accounts/spec.md:10: error: duplicate requirement "Sign up" (first at line 5)
openspec/specs/accounts/spec.md:14: error: delta header "## ADDED Requirements" in a main spec: it belongs in openspec/changes/<change>/specs/<capability>/spec.md
openspec/specs/accounts/spec.md:15: error: requirement "Log in" is outside the "## Requirements" section, where OpenSpec does not read it
`,
	}, {
		name: "a requirement heading without a name",
		src:  purpose + "## Requirements\n" + signUp + "###  \n#### Scenario: s\n- WHEN a THEN b\n",
		diags: `
openspec/specs/accounts/spec.md:10: error: requirement heading without a name or text
openspec/specs/accounts/spec.md:11: warning: scenario "s" is not inside a requirement
`,
	}, {
		name: "set's own rule: every requirement set reads is a heading under ## Requirements",
		src: purpose + "## Requirements\n" + signUp +
			"- REQ-ACCOUNTS-02: Bullet\n  - WHEN a THEN b\n" +
			"#### REQ-ACCOUNTS-03: Too deep\n- WHEN a THEN b\n" +
			"  ### REQ-ACCOUNTS-05: Indented\n#### Scenario: s\n- WHEN a THEN b\n" +
			"## Notes\n### REQ-ACCOUNTS-04: Outside\n- WHEN a THEN b\n",
		diags: `
openspec/specs/accounts/spec.md:10: error: requirement REQ-ACCOUNTS-02 is not a heading directly under "## Requirements", where OpenSpec reads requirements (write it as "### REQ-ACCOUNTS-02: Bullet")
openspec/specs/accounts/spec.md:12: error: requirement REQ-ACCOUNTS-03 is not a heading directly under "## Requirements", where OpenSpec reads requirements (write it as "### REQ-ACCOUNTS-03: Too deep")
openspec/specs/accounts/spec.md:14: error: requirement REQ-ACCOUNTS-05 is not a heading directly under "## Requirements", where OpenSpec reads requirements (write it as "### REQ-ACCOUNTS-05: Indented")
openspec/specs/accounts/spec.md:18: error: requirement REQ-ACCOUNTS-04 is not a heading directly under "## Requirements", where OpenSpec reads requirements (write it as "### REQ-ACCOUNTS-04: Outside")
`,
	}, {
		name: "read as the CLI reads: fences, HTML comments, CRLF and a byte order mark",
		src: "\ufeff" + strings.ReplaceAll(purpose+"## Requirements\n"+signUp+
			"```\n### Requirement: In a fence\n```\n<!--\n### Requirement: In a comment\n-->\n", "\n", "\r\n"),
		diags: `
openspec/specs/accounts/spec.md:14: error: requirement "In a comment" has no scenario: openspec validate wants a "#### Scenario: <name>" heading with its steps under it
openspec/specs/accounts/spec.md:14: error: requirement "In a comment" has no SHALL or MUST in its text (openspec validate --strict requires one)
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := Parse(file, []byte(tc.src), Options{})
			if got, want := renderDiags(diags), strings.TrimPrefix(tc.diags, "\n"); got != want {
				t.Errorf("diagnostics:\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestOpenSpecOnlyForMainSpecs(t *testing.T) {
	for file, want := range map[string]bool{
		"openspec/specs/auth/spec.md":                   true,
		"openspec/specs/search/full-text/spec.md":       true,
		"./openspec/specs/auth/spec.md":                 true,
		"services/api/openspec/specs/auth/spec.md":      true,
		"openspec/specs/spec.md":                        false,
		"openspec/specs/auth/notes.md":                  false,
		"openspec/changes/add-2fa/specs/auth/spec.md":   false,
		"openspec/changes/archive/x/specs/auth/spec.md": false,
		"docs/spec.md":       false,
		"specs/auth/spec.md": false,
		"openspec/specs/auth/spec.md/../../billing/spec.md": true,
	} {
		if got := openspec.IsMainSpec(file); got != want {
			t.Errorf("openspec.IsMainSpec(%q) = %v, want %v", file, got, want)
		}
	}
	// Outside openspec/specs, set's own reading applies: no Purpose or
	// Requirements section is needed, bullets are scenarios.
	src := "### Requirement: Sign up\n- WHEN a visitor posts a valid form THEN an account is created\n"
	for _, file := range []string{"docs/spec.md", "openspec/changes/add/specs/accounts/spec.md"} {
		if _, diags := Parse(file, []byte(src), Options{Strict: true}); len(diags) > 0 {
			t.Errorf("Parse(%s) = %s, want no diagnostics", file, renderDiags(diags))
		}
	}
}

// corpusDir holds main specs at openspec/specs/<case>/spec.md, and
// verdicts.txt what `openspec validate --strict` decided on each.
const corpusDir = "testdata/openspec-validate"

// verdict is the recorded decision of the OpenSpec CLI on one spec.
type verdict struct {
	valid bool
	rules []string // sorted, without duplicates
}

func readVerdicts(t *testing.T) map[string]verdict {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "verdicts.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]verdict{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < 2 || (fields[1] == "valid") != (len(fields) == 2) || (fields[1] != "valid" && fields[1] != "invalid") {
			t.Fatalf("verdicts.txt:%d: want \"CASE valid\" or \"CASE invalid RULE…\"", n)
		}
		out[fields[0]] = verdict{valid: fields[1] == "valid", rules: sortedSet(fields[2:])}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sortedSet(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// TestOpenSpecValidateCorpus holds set to the verdicts the OpenSpec CLI
// gave on the corpus: the same valid/invalid decision, by the same rules.
// When the CLI is installed (SET_OPENSPEC_CLI, or bin/tools/openspec as
// .ci/run installs it), the recorded verdicts are checked against it too.
func TestOpenSpecValidateCorpus(t *testing.T) {
	verdicts := readVerdicts(t)
	entries, err := os.ReadDir(filepath.Join(corpusDir, "openspec", "specs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(verdicts) {
		t.Errorf("%d specs in the corpus, %d verdicts", len(entries), len(verdicts))
	}
	for _, e := range entries {
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			want, ok := verdicts[name]
			if !ok {
				t.Fatalf("no verdict recorded for %s", name)
			}
			file := "openspec/specs/" + name + "/spec.md"
			src, err := os.ReadFile(filepath.Join(corpusDir, filepath.FromSlash(file)))
			if err != nil {
				t.Fatal(err)
			}
			s := ParseAll([]string{file}, map[string][]byte{file: src}, Options{})
			if valid := s.Err() == nil; valid != want.valid {
				t.Errorf("set says valid=%v, openspec validate --strict says valid=%v; set's diagnostics:\n%s", valid, want.valid, renderDiags(s.Diagnostics))
			}
			var rules []string
			for _, is := range openspec.CheckMainSpec(src).Issues {
				rules = append(rules, string(is.Rule))
			}
			if got := sortedSet(rules); !slices.Equal(got, want.rules) {
				t.Errorf("set's OpenSpec rules %q, openspec validate's %q", got, want.rules)
			}
		})
	}

	t.Run("live", func(t *testing.T) {
		cli := clitest.OpenSpec.Require(t)
		got := runOpenSpecValidate(t, cli)
		for name, want := range verdicts {
			v, ok := got[name]
			switch {
			case !ok:
				t.Errorf("%s: the CLI did not validate it", name)
			case v.valid != want.valid || !slices.Equal(v.rules, want.rules):
				t.Errorf("%s: the CLI says valid=%v %q; verdicts.txt records valid=%v %q", name, v.valid, v.rules, want.valid, want.rules)
			}
		}
	})
}

// cliRules maps the messages of `openspec validate` on a main spec to the
// rules of openspec.go; a message none of them names fails the test, since
// it is a rule set does not know.
var cliRules = []struct{ message, rule string }{
	{"Spec must have a Purpose section", string(openspec.RulePurposeMissing)},
	{"Purpose section is still a placeholder", string(openspec.RulePurposePlaceholder)},
	{"Purpose section is too brief", string(openspec.RulePurposeBrief)},
	{"Spec must have a Requirements section", string(openspec.RuleRequirementsMissing)},
	{"Spec must have at least one requirement", string(openspec.RuleNoRequirements)},
	{"Requirement must have at least one scenario", string(openspec.RuleNoScenario)},
	{"Requirement text cannot be empty", string(openspec.RuleEmptyText)},
	{"must contain SHALL or MUST", string(openspec.RuleNoBody)},
	{"should contain SHALL or MUST", string(openspec.RuleNoShall)},
	{"Main spec contains delta header", string(openspec.RuleDeltaHeader)},
	{"appears outside the main ## Requirements section", string(openspec.RuleOutside)},
	{"duplicates the requirement declared on line", string(openspec.RuleDuplicate)},
}

// runOpenSpecValidate runs `openspec validate --specs --strict --json` on a
// copy of the corpus and returns its verdict on each spec.
func runOpenSpecValidate(t *testing.T, cli string) map[string]verdict {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(corpusDir)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli, "validate", "--specs", "--strict", "--json", "--no-interactive")
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home,
		"OPENSPEC_TELEMETRY=0", "DO_NOT_TRACK=1", "NO_UPDATE_NOTIFIER=1", "CI=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output() // exits 1 when a spec is invalid
	var report struct {
		Items []struct {
			ID     string `json:"id"`
			Valid  bool   `json:"valid"`
			Issues []struct {
				Level   string `json:"level"`
				Message string `json:"message"`
			} `json:"issues"`
		} `json:"items"`
	}
	if jerr := json.Unmarshal(out, &report); jerr != nil {
		t.Fatalf("%s validate: %v (%v)\n%s%s", cli, jerr, err, out, stderr.String())
	}
	got := map[string]verdict{}
	for _, it := range report.Items {
		var rules []string
		for _, is := range it.Issues {
			if is.Level == "INFO" {
				continue
			}
			i := slices.IndexFunc(cliRules, func(r struct{ message, rule string }) bool { return strings.Contains(is.Message, r.message) })
			if i < 0 {
				t.Errorf("%s: a message set has no rule for: %s: %s", it.ID, is.Level, is.Message)
				continue
			}
			rules = append(rules, cliRules[i].rule)
		}
		got[it.ID] = verdict{valid: it.Valid, rules: sortedSet(rules)}
	}
	return got
}
