package spec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/diag"
)

// render prints requirements one block each, so a table test reads as the
// spec it checks and a failure shows a readable diff.
func render(reqs []Requirement) string {
	var b strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&b, "%s %q domain=%s %s:%d", r.ID, r.Title, r.Domain, r.File, r.Line)
		if len(r.DependsOn) > 0 {
			fmt.Fprintf(&b, " deps=%s", strings.Join(r.DependsOn, ","))
		}
		b.WriteString("\n")
		if r.Text != "" {
			fmt.Fprintf(&b, "  text %q\n", r.Text)
		}
		for _, s := range r.Scenarios {
			fmt.Fprintf(&b, "  scenario %q @%d", s.Name, s.Line)
			if len(s.Given) > 0 {
				fmt.Fprintf(&b, " given=%q", s.Given)
			}
			fmt.Fprintf(&b, " when=%q then=%q\n", s.When, s.Then)
		}
	}
	return b.String()
}

// renderDiags prints diagnostics one a line, each as diagLine shows it.
func renderDiags(diags diag.List) string {
	var b strings.Builder
	for _, d := range diags {
		b.WriteString(diagLine(d))
		b.WriteString("\n")
	}
	return b.String()
}

// diagLine is d as the tables of these tests write it, position first:
// "docs/spec.md:12: error: message" ("docs/spec.md: …" for the whole file).
func diagLine(d diag.Diagnostic) string {
	var b strings.Builder
	if d.Pos.File != "" {
		b.WriteString(d.Pos.File + ":")
	}
	if d.Pos.Line > 0 {
		fmt.Fprintf(&b, "%d:", d.Pos.Line)
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	return b.String() + string(d.Severity) + ": " + d.Summary
}

// parseCase is one Parse table entry. want is the render of the requirements
// and diags the diagnostics, one per line; a leading newline in either is
// ignored.
type parseCase struct {
	name   string
	file   string // default docs/spec.md
	src    string
	strict bool
	want   string
	diags  string
}

func runParseCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = "docs/spec.md"
			}
			reqs, diags := Parse(file, []byte(tc.src), Options{Strict: tc.strict})
			if got, want := render(reqs), strings.TrimPrefix(tc.want, "\n"); got != want {
				t.Errorf("requirements:\n got:\n%s\nwant:\n%s", got, want)
			}
			if got, want := renderDiags(diags), strings.TrimPrefix(tc.diags, "\n"); got != want {
				t.Errorf("diagnostics:\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// ok is a scenario that makes a requirement complete, for tests about
// something else.
const ok = "- WHEN x\n- THEN y\n"

func TestParseHeadingForm(t *testing.T) {
	runParseCases(t, []parseCase{{
		name: "separators and levels",
		src: "# REQ-AUTH-01: Colon\n" + ok +
			"## REQ-AUTH-02 - Dash\n" + ok +
			"###### REQ-AUTH-03 — Em dash\n" + ok +
			"### REQ-AUTH-LOGIN-04 Space only ###\n" + ok,
		want: `
REQ-AUTH-01 "Colon" domain=auth docs/spec.md:1
  scenario "scenario 1" @2 when=["x"] then=["y"]
REQ-AUTH-02 "Dash" domain=auth docs/spec.md:4
  scenario "scenario 1" @5 when=["x"] then=["y"]
REQ-AUTH-03 "Em dash" domain=auth docs/spec.md:7
  scenario "scenario 1" @8 when=["x"] then=["y"]
REQ-AUTH-LOGIN-04 "Space only" domain=auth docs/spec.md:10
  scenario "scenario 1" @11 when=["x"] then=["y"]
`,
	}, {
		name: "body runs to the next heading of the same or a higher level",
		src: `## REQ-PAY-01: Charge cards
Cards are charged once.

### Notes
Idempotency keys.
### Scenario: retry
- WHEN the request is retried
- THEN the card is charged once
## Other
Not part of it.
`,
		want: `
REQ-PAY-01 "Charge cards" domain=pay docs/spec.md:1
  text "Cards are charged once.\n\n### Notes\n\nIdempotency keys."
  scenario "retry" @6 when=["the request is retried"] then=["the card is charged once"]
`,
	}, {
		name: "a deeper heading closes a scenario at its level",
		src: `# REQ-PAY-02: Refunds
## Scenario: full refund
- WHEN refunded
- THEN money back
## Details
- THEN not a continuation of the named scenario
`,
		want: `
REQ-PAY-02 "Refunds" domain=pay docs/spec.md:1
  text "## Details"
  scenario "full refund" @2 when=["refunded"] then=["money back"]
  scenario "scenario 2" @6 when=[] then=["not a continuation of the named scenario"]
`,
		diags: `
docs/spec.md:6: warning: scenario "scenario 2" of requirement REQ-PAY-02 has THEN but no WHEN
`,
	}, {
		name: "bold ID in a heading",
		src:  "### **REQ-UI-07**: Dark mode\n" + ok,
		want: `
REQ-UI-07 "Dark mode" domain=ui docs/spec.md:1
  scenario "scenario 1" @2 when=["x"] then=["y"]
`,
	}})
}

func TestParseBulletForm(t *testing.T) {
	runParseCases(t, []parseCase{{
		name: "plain, bold and star bullets",
		src: `## Auth
- REQ-AUTH-01: Plain
  - WHEN a
  - THEN b
- **REQ-AUTH-02**: Bold
  - WHEN a
  - THEN b
* **REQ-AUTH-03:** Bold with colon inside
  - WHEN a
  - THEN b
- **REQ-AUTH-04: All bold**
  - WHEN a
  - THEN b
`,
		want: `
REQ-AUTH-01 "Plain" domain=auth docs/spec.md:2
  scenario "scenario 1" @3 when=["a"] then=["b"]
REQ-AUTH-02 "Bold" domain=auth docs/spec.md:5
  scenario "scenario 1" @6 when=["a"] then=["b"]
REQ-AUTH-03 "Bold with colon inside" domain=auth docs/spec.md:8
  scenario "scenario 1" @9 when=["a"] then=["b"]
REQ-AUTH-04 "All bold" domain=auth docs/spec.md:11
  scenario "scenario 1" @12 when=["a"] then=["b"]
`,
	}, {
		name: "body is the indented continuation and nested bullets",
		src: `- REQ-AUTH-02: Passwords are hashed
  with bcrypt, cost 12.

  Old hashes are upgraded on login.
  - a nested note
    - Scenario: register
    - WHEN a user registers
    - THEN the stored password is a bcrypt hash

Not part of the requirement.
- not part either
`,
		want: `
REQ-AUTH-02 "Passwords are hashed" domain=auth docs/spec.md:1
  text "with bcrypt, cost 12.\n\nOld hashes are upgraded on login.\n- a nested note"
  scenario "register" @6 when=["a user registers"] then=["the stored password is a bcrypt hash"]
`,
	}, {
		name: "lazy continuation and top-level steps stay in the body",
		src: `- REQ-CART-01: Items can be added
lazily continued line

- WHEN an item is added
- THEN the cart shows it
- Depends on: REQ-CART-02
- an ordinary bullet ends it
- WHEN this is outside any requirement
- THEN ignored

- REQ-CART-02: Carts persist
  - WHEN the user returns
  - THEN the cart is still there
`,
		want: `
REQ-CART-01 "Items can be added" domain=cart docs/spec.md:1 deps=REQ-CART-02
  text "lazily continued line"
  scenario "scenario 1" @4 when=["an item is added"] then=["the cart shows it"]
REQ-CART-02 "Carts persist" domain=cart docs/spec.md:11
  scenario "scenario 1" @12 when=["the user returns"] then=["the cart is still there"]
`,
	}, {
		name: "a heading or an unindented fence ends a bullet requirement",
		src: "- REQ-A-01: One\n  - WHEN a\n  - THEN b\n#### Scenario: orphan\n" +
			"- REQ-A-02: Two\n  - WHEN a\n  - THEN b\n```\n- WHEN in code\n```\n",
		want: `
REQ-A-01 "One" domain=a docs/spec.md:1
  scenario "scenario 1" @2 when=["a"] then=["b"]
REQ-A-02 "Two" domain=a docs/spec.md:5
  scenario "scenario 1" @6 when=["a"] then=["b"]
`,
		diags: `
docs/spec.md:4: warning: scenario "orphan" is not inside a requirement
`,
	}, {
		name: "an indented bullet is not a requirement",
		src:  "- REQ-A-01: One\n  - REQ-A-02: nested, just text\n  - WHEN a\n  - THEN b\n",
		want: `
REQ-A-01 "One" domain=a docs/spec.md:1
  text "- REQ-A-02: nested, just text"
  scenario "scenario 1" @3 when=["a"] then=["b"]
`,
	}})
}

func TestParseOpenSpec(t *testing.T) {
	runParseCases(t, []parseCase{{
		name: "living spec: ID derived from the capability directory",
		file: "openspec/specs/user-auth/spec.md",
		src: `## Purpose
Authentication: who the user is, and for how long.

## Requirements
### Requirement: User login
The system SHALL let users log in.

#### Scenario: Valid credentials
- **GIVEN** a registered user
- **WHEN** they submit valid credentials
- **AND** the account is active
- **THEN** a session is created
- **AND** they land on the dashboard

### Requirement: Logout
Users MUST be able to log out.
#### Scenario: Logout
- **WHEN** the user logs out
- **THEN** the session ends
`,
		want: `
REQ-USER-AUTH-01 "User login" domain=user-auth openspec/specs/user-auth/spec.md:5
  text "The system SHALL let users log in."
  scenario "Valid credentials" @8 given=["a registered user"] when=["they submit valid credentials" "the account is active"] then=["a session is created" "they land on the dashboard"]
REQ-USER-AUTH-02 "Logout" domain=user-auth openspec/specs/user-auth/spec.md:15
  text "Users MUST be able to log out."
  scenario "Logout" @17 when=["the user logs out"] then=["the session ends"]
`,
	}, {
		name: "domain from the enclosing section, ordinals per domain",
		src: `# Shop
## Catalog
### Requirement: Browse
` + ok + `
## ADDED Requirements
### Requirement: Fallback to the title
` + ok + `
## Checkout flow
### Requirement: Pay
` + ok + `### Requirement: Receipt
` + ok,
		want: `
REQ-CATALOG-01 "Browse" domain=catalog docs/spec.md:3
  scenario "scenario 1" @4 when=["x"] then=["y"]
REQ-SHOP-01 "Fallback to the title" domain=shop docs/spec.md:8
  scenario "scenario 1" @9 when=["x"] then=["y"]
REQ-CHECKOUT-FLOW-01 "Pay" domain=checkout-flow docs/spec.md:13
  scenario "scenario 1" @14 when=["x"] then=["y"]
REQ-CHECKOUT-FLOW-02 "Receipt" domain=checkout-flow docs/spec.md:16
  scenario "scenario 1" @17 when=["x"] then=["y"]
`,
	}, {
		name: "a '# <capability> Specification' title names the domain",
		file: "openspec/specs/x/spec.md",
		src: "# Billing Specification\n## Purpose\nInvoices: what is billed to whom, and when it is sent.\n" +
			"## Requirements\n### Requirement: Invoice\nThe system SHALL bill monthly.\n#### Scenario: s\n" + ok,
		want: `
REQ-BILLING-01 "Invoice" domain=billing openspec/specs/x/spec.md:5
  text "The system SHALL bill monthly."
  scenario "s" @7 when=["x"] then=["y"]
`,
	}, {
		name: "delta spec: domain from the capability of the change",
		file: "openspec/changes/add-2fa/specs/2fa/spec.md",
		src:  "## ADDED Requirements\n### Requirement: TOTP\n" + ok,
		want: `
REQ-D-2FA-01 "TOTP" domain=2fa openspec/changes/add-2fa/specs/2fa/spec.md:2
  scenario "scenario 1" @3 when=["x"] then=["y"]
`,
	}, {
		name: "domain from the file name",
		file: "docs/Search_Index.md",
		src:  "### Requirement: Full text\n" + ok,
		want: `
REQ-SEARCH-INDEX-01 "Full text" domain=search-index docs/Search_Index.md:1
  scenario "scenario 1" @2 when=["x"] then=["y"]
`,
	}, {
		name: "an ID in the title is used, and counts in the ordinal",
		src: "## Auth\n### Requirement: REQ-LOGIN-07: Remember me\n" + ok +
			"### Requirement: Reset password\n" + ok,
		want: `
REQ-LOGIN-07 "Remember me" domain=login docs/spec.md:2
  scenario "scenario 1" @3 when=["x"] then=["y"]
REQ-AUTH-02 "Reset password" domain=auth docs/spec.md:5
  scenario "scenario 1" @6 when=["x"] then=["y"]
`,
	}, {
		name: "requirement headings are not domains",
		src:  "## REQ-CORE-01: Core\n" + ok + "### Requirement: Nested\n" + ok,
		want: `
REQ-CORE-01 "Core" domain=core docs/spec.md:1
  scenario "scenario 1" @2 when=["x"] then=["y"]
REQ-SPEC-01 "Nested" domain=spec docs/spec.md:4
  scenario "scenario 1" @5 when=["x"] then=["y"]
`,
	}})
}
