package spec

import "testing"

// TestParseNearMisses: a heading or line meant as a scenario or a
// requirement that the parser does not read as one is an error at its
// line naming what was meant; the requirements are still read as
// written. What the parser reads whatever its case or level, and words
// that only look alike, are not near misses.
func TestParseNearMisses(t *testing.T) {
	runParseCases(t, []parseCase{{
		name: "a misspelt scenario heading",
		src:  "## Stats\n### REQ-STATS-01: Mean\nThe library SHALL return the mean.\n\n#### Senario: mean\n" + ok,
		want: `
REQ-STATS-01 "Mean" domain=stats docs/spec.md:2
  text "The library SHALL return the mean.\n\n#### Senario: mean"
  scenario "scenario 1" @6 when=["x"] then=["y"]
`,
		diags: `
docs/spec.md:5: error: "#### Senario: mean" is not a scenario heading (want "#### Scenario: mean"): its name would be text of requirement REQ-STATS-01 and the steps under it a scenario named "scenario 1"
`,
	}, {
		name: "scenario headings misspelt otherwise, or with no colon",
		src:  "### REQ-STATS-01: Mean\n#### Scenaro: a\n" + ok + "#### Secnario: b\n" + ok + "#### scenarios: c\n" + ok + "#### Scenario d\n" + ok + "#### **Senario**: e\n" + ok,
		want: `
REQ-STATS-01 "Mean" domain=stats docs/spec.md:1
  text "#### Scenaro: a\n\n#### Secnario: b\n\n#### scenarios: c\n\n#### Scenario d\n\n#### **Senario**: e"
  scenario "scenario 1" @3 when=["x"] then=["y"]
  scenario "scenario 2" @6 when=["x"] then=["y"]
  scenario "scenario 3" @9 when=["x"] then=["y"]
  scenario "scenario 4" @12 when=["x"] then=["y"]
  scenario "scenario 5" @15 when=["x"] then=["y"]
`,
		diags: `
docs/spec.md:2: error: "#### Scenaro: a" is not a scenario heading (want "#### Scenario: a"): its name would be text of requirement REQ-STATS-01 and the steps under it a scenario named "scenario 1"
docs/spec.md:5: error: "#### Secnario: b" is not a scenario heading (want "#### Scenario: b"): its name would be text of requirement REQ-STATS-01 and the steps under it a scenario named "scenario 2"
docs/spec.md:8: error: "#### scenarios: c" is not a scenario heading (want "#### Scenario: c"): its name would be text of requirement REQ-STATS-01 and the steps under it a scenario named "scenario 3"
docs/spec.md:11: error: "#### Scenario d" is not a scenario heading (want "#### Scenario: d"): its name would be text of requirement REQ-STATS-01 and the steps under it a scenario named "scenario 4"
docs/spec.md:14: error: "#### **Senario**: e" is not a scenario heading (want "#### Scenario: e"): its name would be text of requirement REQ-STATS-01 and the steps under it a scenario named "scenario 5"
`,
	}, {
		name: "a misspelt scenario marker line",
		src:  "### REQ-STATS-01: Mean\n- **Senario**: mean\n  " + ok + "\nScenaria: m\n" + ok + "- REQ-STATS-02: Median\n  " + ok + "- Senario: median\n  " + ok,
		want: `
REQ-STATS-01 "Mean" domain=stats docs/spec.md:1
  text "- **Senario**: mean\n\nScenaria: m"
  scenario "scenario 1" @3 when=["x"] then=["y"]
  scenario "scenario 2" @7 when=["x"] then=["y"]
REQ-STATS-02 "Median" domain=stats docs/spec.md:9
  scenario "scenario 1" @10 when=["x"] then=["y"]
`,
		diags: `
docs/spec.md:2: error: "- **Senario**: mean" is not a scenario (want "- Scenario: mean"): its name would be text of requirement REQ-STATS-01 and the steps under it a scenario named "scenario 1"
docs/spec.md:6: error: "Scenaria: m" is not a scenario (want "Scenario: m"): its name would be text of requirement REQ-STATS-01 and the steps under it a scenario named "scenario 2"
docs/spec.md:12: error: "- Senario: median" is not a scenario (want "- Scenario: median"): it would end requirement REQ-STATS-02 and leave the steps under it in no requirement
`,
	}, {
		name: "a misspelt scenario heading that ends its requirement",
		src:  "### REQ-STATS-01: Mean\n### Senario: mean\n" + ok,
		want: `
REQ-STATS-01 "Mean" domain=stats docs/spec.md:1
`,
		diags: `
docs/spec.md:1: warning: requirement REQ-STATS-01 has no scenario
docs/spec.md:2: error: "### Senario: mean" is not a scenario heading (want "### Scenario: mean"): it would end requirement REQ-STATS-01 and leave the steps under it in no requirement
`,
	}, {
		name: "a misspelt OpenSpec requirement heading",
		src:  "## Stats\n### Requirement: Mean\nThe library SHALL return the mean.\n#### Scenario: mean\n" + ok + "\n### Requirment: Median\nThe library SHALL return the median.\n#### Scenario: median\n" + ok,
		want: `
REQ-STATS-01 "Mean" domain=stats docs/spec.md:2
  text "The library SHALL return the mean."
  scenario "mean" @4 when=["x"] then=["y"]
`,
		diags: `
docs/spec.md:8: error: "### Requirment: Median" is not a requirement heading (want "### Requirement: Median"): the requirement it starts would not be read
docs/spec.md:10: warning: scenario "median" is not inside a requirement
`,
	}, {
		name: "an ID in lower case",
		src:  "### req-stats-01: Mean\n" + ok + "- Req-Stats-02: Median\n  " + ok + "- **req-stats-03**: Mode\n  " + ok,
		want: `
`,
		diags: `
docs/spec.md:1: error: "### req-stats-01: Mean" is not a requirement heading (want "### REQ-STATS-01: Mean"): the requirement it starts would not be read
docs/spec.md:4: error: "- Req-Stats-02: Median" is not a requirement (want "- REQ-STATS-02: Median"): the requirement it starts would not be read
docs/spec.md:7: error: "- **req-stats-03**: Mode" is not a requirement (want "- **REQ-STATS-03**: Mode"): the requirement it starts would not be read
`,
	}, {
		name: "not near misses",
		src: "# Scenarios\n## Requirements\n## Scenario planning\n# Requirement is its own capability\n### Requirement gathering\n## Stats\n### REQ-STATS-10: Mean\nScenario planning is out of scope.\nRequirements: none more.\n~~~\n#### Senario: code\n~~~\n" +
			"#### SCENARIO: upper case\n" + ok + "##### Scenario: deeper\n" + ok + "#### Scenario\n" + ok + "### requirement: Lower case\n" + ok +
			"## Retirement: when accounts close\nAccounts close on request.\n",
		want: `
REQ-STATS-10 "Mean" domain=stats docs/spec.md:7
  text "Scenario planning is out of scope.\nRequirements: none more.\n~~~\n#### Senario: code\n~~~\n\n#### Scenario"
  scenario "upper case" @13 when=["x"] then=["y"]
  scenario "deeper" @16 when=["x"] then=["y"]
  scenario "scenario 3" @20 when=["x"] then=["y"]
REQ-STATS-01 "Lower case" domain=stats docs/spec.md:22
  scenario "scenario 1" @23 when=["x"] then=["y"]
`,
		diags: `
`,
	}})
}
