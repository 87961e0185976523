package spec

import "testing"

func TestParseScenarios(t *testing.T) {
	runParseCases(t, []parseCase{{
		name: "markers: heading, bullet, bold bullet, plain line",
		src: `### REQ-S-01: Markers
#### Scenario: heading
- WHEN a
- THEN b
- Scenario: bullet
  - WHEN c
  - THEN d
- **Scenario**: bold
  - WHEN e
  - THEN f
- **Scenario:** bold colon inside
  - WHEN g
  - THEN h
Scenario: plain
WHEN i
THEN j
`,
		want: `
REQ-S-01 "Markers" domain=s docs/spec.md:1
  scenario "heading" @2 when=["a"] then=["b"]
  scenario "bullet" @5 when=["c"] then=["d"]
  scenario "bold" @8 when=["e"] then=["f"]
  scenario "bold colon inside" @11 when=["g"] then=["h"]
  scenario "plain" @14 when=["i"] then=["j"]
`,
	}, {
		name: "keyword spellings",
		src: `### REQ-S-02: Keywords
- **WHEN** bold
- **When**: bold colon after
- **when:** bold colon inside
- When: plain colon
- **WHEN the whole step is bold**
- then lower case
- THEN: upper with colon
`,
		want: `
REQ-S-02 "Keywords" domain=s docs/spec.md:1
  scenario "scenario 1" @2 when=["bold" "bold colon after" "bold colon inside" "plain colon" "the whole step is bold"] then=["lower case" "upper with colon"]
`,
	}, {
		name: "AND extends the previous keyword; a leading AND is prose",
		src: `### REQ-S-03: And
And this is prose.

- GIVEN g1
- AND g2
- WHEN w1
- AND w2
- THEN t1
- **AND** t2
`,
		want: `
REQ-S-03 "And" domain=s docs/spec.md:1
  text "And this is prose."
  scenario "scenario 1" @4 given=["g1" "g2"] when=["w1" "w2"] then=["t1" "t2"]
`,
	}, {
		name: "unnamed scenarios split when WHEN follows THEN",
		src: `### REQ-S-04: Two unnamed
- WHEN a
- THEN b
- WHEN c
- THEN d
- GIVEN e
- WHEN f
- THEN g
`,
		want: `
REQ-S-04 "Two unnamed" domain=s docs/spec.md:1
  scenario "scenario 1" @2 when=["a"] then=["b"]
  scenario "scenario 2" @4 when=["c"] then=["d"]
  scenario "scenario 3" @6 given=["e"] when=["f"] then=["g"]
`,
	}, {
		name: "a named scenario keeps all its steps",
		src:  "### REQ-S-05: Named\n#### Scenario: long\n- WHEN a\n- THEN b\n- WHEN c\n- THEN d\n",
		want: `
REQ-S-05 "Named" domain=s docs/spec.md:1
  scenario "long" @2 when=["a" "c"] then=["b" "d"]
`,
	}, {
		name: "unnamed steps before the first marker",
		src:  "### REQ-S-06: Mixed\n- WHEN a\n- THEN b\n#### Scenario: \n- WHEN c\n- THEN d\n",
		want: `
REQ-S-06 "Mixed" domain=s docs/spec.md:1
  scenario "scenario 1" @2 when=["a"] then=["b"]
  scenario "scenario 2" @4 when=["c"] then=["d"]
`,
	}, {
		name: "When in the middle of a paragraph is prose; wrapped steps continue",
		src: `### REQ-S-07: Prose
The session expires
when the user is idle for 30 minutes.
Whenever possible, warn first.

WHEN the user is idle
  for 30 minutes
THEN the session expires
`,
		want: `
REQ-S-07 "Prose" domain=s docs/spec.md:1
  text "The session expires\nwhen the user is idle for 30 minutes.\nWhenever possible, warn first."
  scenario "scenario 1" @6 when=["the user is idle for 30 minutes"] then=["the session expires"]
`,
	}})
}

func TestParseSkipped(t *testing.T) {
	runParseCases(t, []parseCase{{
		name: "code fences hide requirements and steps",
		src: "```md\n### REQ-CODE-01: Not real\n- WHEN no\n```\n" +
			"~~~~\n- REQ-CODE-02: Not real\n```\n~~~~\n" +
			"### REQ-CODE-03: Real\nSee:\n\n```go\n- WHEN not a step\n\nx := 1\n```\n" + ok,
		want: `
REQ-CODE-03 "Real" domain=code docs/spec.md:9
  text "See:\n\n` + "```go\\n- WHEN not a step\\n\\nx := 1\\n```" + `"
  scenario "scenario 1" @17 when=["x"] then=["y"]
`,
	}, {
		name: "an unclosed fence hides the rest of the file",
		src:  "### REQ-CODE-04: Before\n" + ok + "````\n### REQ-CODE-05: Hidden\n",
		want: `
REQ-CODE-04 "Before" domain=code docs/spec.md:1
  text "` + "````\\n### REQ-CODE-05: Hidden" + `"
  scenario "scenario 1" @2 when=["x"] then=["y"]
`,
		diags: `
docs/spec.md:4: warning: code fence is never closed; the rest of the file is code
`,
	}, {
		name: "HTML comments are removed",
		src: `<!-- ### REQ-HTML-01: Commented out -->
### REQ-HTML-02: Visible <!-- TODO: rename -->
<!--
- WHEN hidden
- THEN hidden
-->
- WHEN shown <!-- inline --> here
- THEN ok
<!-- unclosed
### REQ-HTML-03: Hidden
`,
		want: `
REQ-HTML-02 "Visible" domain=html docs/spec.md:2
  scenario "scenario 1" @7 when=["shown  here"] then=["ok"]
`,
		diags: `
docs/spec.md:9: warning: HTML comment is never closed; the rest of the file is ignored
`,
	}})
}

func TestParseDependsOn(t *testing.T) {
	runParseCases(t, []parseCase{{
		name: "forms, separators, order and deduplication",
		src: `### REQ-DEP-01: Deps
Depends on: REQ-A-01, REQ-B-02
- **Depends on:** REQ-C-03 REQ-A-01
**Depends on**: ` + "`REQ-D-04`" + `,REQ-E-05 and REQ-F-06.
Prose stays.
` + ok,
		want: `
REQ-DEP-01 "Deps" domain=dep docs/spec.md:1 deps=REQ-A-01,REQ-B-02,REQ-C-03,REQ-D-04,REQ-E-05,REQ-F-06
  text "Prose stays."
  scenario "scenario 1" @6 when=["x"] then=["y"]
`,
	}, {
		name: "none is empty; malformed IDs are errors",
		src:  "### REQ-DEP-02: Deps\nDepends on: none\n- Depends on: REQ-ok-1, REQ-G-07\n" + ok,
		want: `
REQ-DEP-02 "Deps" domain=dep docs/spec.md:1 deps=REQ-G-07
  scenario "scenario 1" @4 when=["x"] then=["y"]
`,
		diags: `
docs/spec.md:3: error: malformed requirement ID "REQ-ok-1" (want REQ-<DOMAIN>-<NUMBER>, e.g. REQ-AUTH-01)
`,
	}, {
		name: "Depends on without a colon is prose",
		src:  "### REQ-DEP-03: Deps\nDepends on the network.\n" + ok,
		want: `
REQ-DEP-03 "Deps" domain=dep docs/spec.md:1
  text "Depends on the network."
  scenario "scenario 1" @3 when=["x"] then=["y"]
`,
	}})
}

func TestParseOneLineScenarios(t *testing.T) {
	runParseCases(t, []parseCase{{
		name: "WHEN … THEN …, one scenario a line",
		src: `### REQ-ACCT-01: Visitors sign up
- WHEN a visitor posts a valid form THEN an account is created
- WHEN a visitor posts a form without an email THEN the form says "email is required"
`,
		want: `
REQ-ACCT-01 "Visitors sign up" domain=acct docs/spec.md:1
  scenario "scenario 1" @2 when=["a visitor posts a valid form"] then=["an account is created"]
  scenario "scenario 2" @3 when=["a visitor posts a form without an email"] then=["the form says \"email is required\""]
`,
	}, {
		name: "AND after WHEN and after THEN",
		src: `### REQ-ACCT-02: Duplicates
- WHEN a visitor posts a form AND the email is taken THEN the form says so AND no account is created
`,
		want: `
REQ-ACCT-02 "Duplicates" domain=acct docs/spec.md:1
  scenario "scenario 1" @2 when=["a visitor posts a form" "the email is taken"] then=["the form says so" "no account is created"]
`,
	}, {
		name: "GIVEN … WHEN … THEN …, with commas, colons and a dash",
		src: `### REQ-ACCT-03: Login
- GIVEN a registered user, WHEN: they log in — THEN a session starts; AND the dashboard shows
`,
		want: `
REQ-ACCT-03 "Login" domain=acct docs/spec.md:1
  scenario "scenario 1" @2 given=["a registered user"] when=["they log in"] then=["a session starts" "the dashboard shows"]
`,
	}, {
		name: "bold keywords in any case",
		src: `### REQ-ACCT-04: Bold
- **WHEN** a visitor posts **THEN** an account is created **AND** a mail is sent
- **Given** a user **When**: they log out **then:** the session ends
- **WHEN a visitor posts twice THEN one account exists**
`,
		want: `
REQ-ACCT-04 "Bold" domain=acct docs/spec.md:1
  scenario "scenario 1" @2 when=["a visitor posts"] then=["an account is created" "a mail is sent"]
  scenario "scenario 2" @3 given=["a user"] when=["they log out"] then=["the session ends"]
  scenario "scenario 3" @4 when=["a visitor posts twice"] then=["one account exists"]
`,
	}, {
		name: "under a named scenario, in a bullet requirement and on plain lines",
		src: `### REQ-ACCT-05: Named
#### Scenario: valid form
- WHEN a visitor posts a valid form THEN an account is created

- REQ-ACCT-06: Bullet form
  - WHEN a visitor posts THEN an account is created

### REQ-ACCT-07: Plain lines
WHEN a visitor posts THEN an account is created
`,
		want: `
REQ-ACCT-05 "Named" domain=acct docs/spec.md:1
  scenario "valid form" @2 when=["a visitor posts a valid form"] then=["an account is created"]
REQ-ACCT-06 "Bullet form" domain=acct docs/spec.md:5
  scenario "scenario 1" @6 when=["a visitor posts"] then=["an account is created"]
REQ-ACCT-07 "Plain lines" domain=acct docs/spec.md:8
  scenario "scenario 1" @9 when=["a visitor posts"] then=["an account is created"]
`,
	}, {
		name: "a keyword inside a wrapped step starts the next step",
		src: `### REQ-ACCT-08: Wrapped
- WHEN a visitor posts a valid form
  from the landing page THEN an account is created
  within a second
`,
		want: `
REQ-ACCT-08 "Wrapped" domain=acct docs/spec.md:1
  scenario "scenario 1" @2 when=["a visitor posts a valid form from the landing page"] then=["an account is created within a second"]
`,
	}, {
		name: "prose, quotes and code are not keywords",
		src: "### REQ-ACCT-09: Not keywords\n" +
			"- WHEN the user saves and then closes the editor\n" +
			"- THEN the banner says \"WHEN IN DOUBT, ASK\" and `AND` stays AND\n" +
			"- AND the title reads “SAVE THEN QUIT”\n" +
			"- THEN: the list ends with THEN\n",
		want: `
REQ-ACCT-09 "Not keywords" domain=acct docs/spec.md:1
  scenario "scenario 1" @2 when=["the user saves and then closes the editor"] then=["the banner says \"WHEN IN DOUBT, ASK\" and ` + "`AND`" + ` stays AND" "the title reads “SAVE THEN QUIT”" "the list ends with THEN"]
`,
	}, {
		name: "a one-line scenario without THEN is still an error",
		src:  "### REQ-ACCT-10: Incomplete\n- WHEN a visitor posts AND waits\n",
		want: `
REQ-ACCT-10 "Incomplete" domain=acct docs/spec.md:1
  scenario "scenario 1" @2 when=["a visitor posts" "waits"] then=[]
`,
		diags: `
docs/spec.md:2: error: scenario "scenario 1" of requirement REQ-ACCT-10 has WHEN but no THEN
`,
	}})
}
