package main

import (
	"fmt"
	"io/fs"
	"strings"

	set "github.com/set-engine/set"
	"github.com/set-engine/set/engine/cond"
)

// The pages of docs/ that hold what setctl prints (the help topics, the
// command reference) are rewritten from it by:
//go:generate go test -run TestDocs(Topics|Commands) -update-docs

// topic is a help page that is not a command: `setctl help NAME` prints
// its text to stdout.
type topic struct {
	name    string
	summary string
	text    func() string
}

func topics() []topic {
	return []topic{conditionsTopic(), plannerTopic(), sentinelTopic()}
}

func plannerTopic() topic {
	return topic{
		name:    "planner",
		summary: "the planner strategies, and the prompts a model planner is given",
		text: func() string {
			return plannerText + "\nThe prompts, stdlib/prompts.cue:\n\n" + embeddedCUE("stdlib/prompts.cue")
		},
	}
}

const plannerText = `planner.strategy says how the spec becomes a plan's changes. Only what
main does not implement yet (new, changed and removed requirements) is
planned.

  static       the default; no model: one change per spec domain, split
               to at most planner.maxRequirementsPerChange requirements,
               scoped to the domain's paths in planner.scopes
  single       the plan role's model plans in one call
  three-phase  a brief call (the architecture, the decisions across
               domains, notes per domain), one call per domain
               (planner.parallel at once), then a merge call
  auto         single when the single call's input, at one token per 4
               bytes, is at most planner.singleCallMaxInputTokens, else
               three-phase
  openspec     no model and no spec: every OpenSpec change folder under
               openspec/changes/ on main (archive/ aside) is one change,
               named after it (docs/openspec.md)

A project whose people write OpenSpec change folders (openspec new change,
/opsx:propose, or by hand) says, in set.cue,

  project: golang.#Project & {
      name: "shortly"
      planner: strategy: "openspec"
  }

and a change that must wait for another beyond what its delta specs say
(a change waits for the one that ADDs a requirement it MODIFIES, REMOVES
or RENAMES) names it in its .openspec.yaml, which OpenSpec leaves alone:

  schema: spec-driven
  created: 2026-11-27
  depends_on: [add-links]

spec lists at least one file unless the strategy is openspec, which takes
none: a project plans from one source. A markdown strategy refuses a change
folder open on main that set did not write (it would neither implement nor
archive it); choose planner.strategy: "openspec", or archive the folder.
planner.replan: "auto" needs a strategy that calls a model.

The plan role's model is agent.models.plan through agent.transport, with
agent.fallbacks.plan when it is overloaded, rate-limited or times out.
Every answer is checked against the schema's #PlannedChanges and the
plan's rules; a rejected one goes back to the model with the errors, up to
planner.repairs times per call, then setctl plan fails showing them.
setctl vet asks no model; setctl plan prints the strategy, the calls and
their tokens, and a run journals the calls as LLM_CALL events.

A model planner is also given the adopted learnings (project.learnings):
conventions among the conventions, planning learnings among the planning
rules; setctl plan names the learnings a plan used.

A project adds planning rules (planner: rules: "one-session": "…") and
replaces a prompt template by unification
(planner: prompts: single: "…"); setctl vet runs every template on
sample data, so a misspelled field is an error at its line.
`

func sentinelTopic() topic {
	return topic{
		name:    "sentinel",
		summary: "the sentinel's rules, ladders and grace, with its defaults",
		text:    sentinelHelp,
	}
}

// sentinelHelp is `setctl help sentinel`: how rules, ladders and grace act
// (engine/sentinel's package doc says the same), examples that pass vet
// (TestDocsSetCUE), and the stdlib's defaults as the binary embeds them.
func sentinelHelp() string {
	return sentinelText + "\nThe defaults, stdlib/sentinel.cue:\n\n" + embeddedCUE("stdlib/sentinel.cue")
}

// embeddedCUE is the embedded module's file at path from its first doc
// comment on, indented, tabs as two spaces.
func embeddedCUE(path string) string {
	data, err := fs.ReadFile(set.Module, path)
	if err != nil {
		panic(err) // embedded by the same build
	}
	_, body, _ := strings.Cut(string(data), "\n// ")
	var b strings.Builder
	for line := range strings.Lines("// " + body) {
		tabs := len(line) - len(strings.TrimLeft(line, "\t"))
		if line = strings.Repeat("  ", tabs) + line[tabs:]; line != "\n" {
			line = "  " + line
		}
		b.WriteString(line)
	}
	return b.String()
}

const sentinelText = `The sentinel supervises every running change. Its rules are set.cue's
project.sentinel; the golang profile takes the stdlib's (below), which a
project overrides and extends by unification.

Facts
  A rule's when is an expr-lang condition over the change's live facts:
  status, activity ("agent", "gate:NAME" or ""), command,
  activitySeconds, secondsSinceOutput, iterationSeconds, iterations,
  tokensUsed, tokenBudget, retries.verify, retries.integration,
  retries.conflicts, restarts and lastExit (code, signal, apiError).
  setctl help conditions describes each; setctl vet rejects a name that
  is none of them.

Rules and ladders
  A rule fires when its when becomes true: it climbs one step of its
  ladder and takes that step. While when keeps holding, it climbs again
  each time every (60s unless set) has passed, up to the ladder's last
  step, which it takes again only when when becomes true anew. action: X
  is a ladder of one step. Progress (a new commit, a passed gate) puts
  every ladder back at its foot; new output puts back the ladders of the
  rules that read secondsSinceOutput (an agent that prints an API error
  and exits has made no progress for a rule about exits). Rules fire in
  name order.

    warn        a SENTINEL_ACTION event and a line in the live view
    restart     kill the agent iteration's process group and start a new
                iteration in the same session; with backoff set, the k-th
                restart since the ladder's foot waits backoff×2^(k-1)
    redispatch  a fresh session on a fresh worktree from the change's branch
    fail        failed:stalled (fails: "agent_error": failed:agent_error);
                the change's dependents become dep-blocked
    pause       stop the change where it is, keeping its worktree and
                session, until it is resumed

Grace
  grace maps an activity glob to a duration. While the change's activity
  matches a glob, alone ("gate:test") or with its command
  ("agent:npm install --no-audit"), and has run for less than the
  duration, the rules with graced: true (the default) are held back. In a
  glob * matches any run of characters and ? one. Rules on tokens and
  exits set graced: false.

Examples
  sentinel: rules: stall: when: "activity == \"agent\" && secondsSinceOutput > 300"
  sentinel: rules: stall: ladder: ["warn", "restart", "fail"]
  sentinel: rules: crash: when: "false"
  sentinel: rules: slow_gate: {when: "activity == \"gate:test\" && activitySeconds > 900", action: "warn"}
  sentinel: grace: "gate:e2e": "30m"
  sentinel: heartbeat: "10s"
`

func conditionsTopic() topic {
	return topic{
		name:    "conditions",
		summary: "the names and types a `when` condition can use, with examples",
		text:    conditionsHelp,
	}
}

// conditionsHelp is `setctl help conditions`, generated from the condition
// environments of engine/cond so that it lists exactly what compiles.
// docs/conditions.md holds the same text (TestDocsTopics).
func conditionsHelp() string {
	var b strings.Builder
	b.WriteString(`A when condition is an expr-lang expression that yields true or false
(the language: https://expr-lang.org/docs/language-definition). setctl vet
and setctl plan compile every condition against the names below, so a
misspelled name is an error before anything runs.
`)
	// listed holds the names already described: a later environment refers
	// back to a group it shares (change.*) instead of repeating it.
	listed := map[string]cond.Name{}
	for _, env := range cond.Environments() {
		fmt.Fprintf(&b, "\n%s\n\n%s\n", env.Field, indent(env.About, "  "))
		var planTime, runTime []cond.Name
		for _, n := range env.Names {
			if n.RunTime {
				runTime = append(runTime, n)
			} else {
				planTime = append(planTime, n)
			}
		}
		if len(planTime) > 0 && len(runTime) > 0 {
			b.WriteString("\n  Known when the plan is made:\n")
			writeNames(&b, planTime, listed)
			b.WriteString("\n  Known at run time, from the change's diff:\n")
			writeNames(&b, runTime, listed)
		} else {
			b.WriteString("\n")
			writeNames(&b, env.Names, listed)
		}
		for _, n := range env.Names {
			listed[n.Name] = n
		}
		b.WriteString("\n  Examples:\n")
		for _, ex := range env.Examples {
			fmt.Fprintf(&b, "    %s\n        %s\n", ex.Source, ex.Means)
		}
	}
	return b.String()
}

// writeNames describes each name as "name (type)" with its doc below. The
// names under one prefix (change.name, change.type, …) that were all
// listed before, identically, become one line: "change.* as above".
func writeNames(b *strings.Builder, names []cond.Name, listed map[string]cond.Name) {
	repeated := map[string]bool{} // prefix → every name under it was listed
	for _, n := range names {
		if prefix, _, ok := strings.Cut(n.Name, "."); ok {
			prev, seen := repeated[prefix]
			repeated[prefix] = (prev || !seen) && listed[n.Name] == n
		}
	}
	for _, n := range names {
		prefix, _, ok := strings.Cut(n.Name, ".")
		if ok && repeated[prefix] {
			fmt.Fprintf(b, "    %s.*  as above\n", prefix)
			repeated[prefix] = false
			continue
		}
		if ok && listed[n.Name] == n {
			continue // its group's line is written
		}
		fmt.Fprintf(b, "    %s (%s)\n", n.Name, n.Type)
		b.WriteString(wrap("        ", n.Doc, 79))
	}
}

// wrap writes prefix followed by text, breaking text at spaces so that
// lines stay within width where the words allow; continuation lines are
// indented like the first.
func wrap(prefix, text string, width int) string {
	var b strings.Builder
	line := prefix
	for i, word := range strings.Fields(text) {
		if i > 0 && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = prefix
		} else if i > 0 {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
