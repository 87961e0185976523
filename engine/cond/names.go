package cond

import (
	"iter"
	"reflect"
	"sort"
	"strings"
)

// Name is one name a condition can read, described in the terms of a
// set.cue author rather than Go's.
type Name struct {
	// Name is the dotted expr name, e.g. "change.type" or "files".
	Name string
	// Type is the value's type in user terms: "string", "number", "bool",
	// "list of strings".
	Type string
	// RunTime is set when the value exists only once the change's agent
	// has worked; a condition reading it is decided at run time.
	RunTime bool
	// Doc says what the value holds.
	Doc string
}

// Example is a condition that compiles in its environment, with what it
// selects.
type Example struct {
	Source string
	Means  string
}

// Environment is one place set.cue writes a `when`, with every name a
// condition there can read and examples. It is derived from the Go type
// the condition is compiled against, so it lists exactly what the
// compiler accepts.
type Environment struct {
	// Field is where the condition is written in set.cue.
	Field string
	// About says what the condition decides and when it is evaluated.
	About    string
	Names    []Name
	Examples []Example
}

// Environments describes every place a condition is written: the gates'
// `when` and the sentinel rules' `when`.
func Environments() []Environment {
	return []Environment{
		{
			Field: "gates: NAME: when",
			About: `The gate runs only for the changes where the condition holds. A
condition over plan-time names is decided when the plan is made (setctl
plan lists the gate as skipped); one that reads a run-time name is
decided on the change's diff, before its gates run.`,
			Names:    envNames(reflect.TypeFor[GateEnv]()),
			Examples: gateExamples,
		},
		{
			Field: "sentinel: rules: NAME: when",
			About: `The rule fires when the condition becomes true for a running change,
and climbs its ladder while it stays true. It reads the live facts of
the change while the change runs; every name is known only then.`,
			Names:    envNames(reflect.TypeFor[SentinelEnv]()),
			Examples: sentinelExamples,
		},
	}
}

// docs describes every name of every environment, keyed by its dotted expr
// name. A test checks that each name has a doc and each doc a name.
var docs = map[string]string{
	"change.name":         "the change's kebab-case name",
	"change.type":         `its type: "feature", "fix", "refactor", "infrastructure", "schema", "docs", "test" or "cleanup"`,
	"change.size":         `its estimated size: "S", "M" or "L"`,
	"change.domain":       `the spec domain of its requirements, lower-case ("auth" for REQ-AUTH-01); "" when none`,
	"change.requirements": `the requirement IDs it implements, e.g. ["REQ-AUTH-01"]`,
	"change.dependsOn":    "the changes that must be merged before it",
	"change.scope":        "the path globs it may touch; empty means anywhere",
	"userFolder":          `whether the change implements an OpenSpec change folder the project's people wrote (planner: strategy: "openspec")`,
	"files":               "the paths, relative to the repository, that the change's diff touches",

	"status":              `the change's status, e.g. "implementing", "verifying", "integrating"`,
	"activity":            `what the change does now: "agent", "gate:NAME", or "" between them (a change in the merge queue is not supervised)`,
	"command":             `the command line the activity runs now: the agent's current tool command (e.g. "npm install"), a gate's argv joined by spaces; "" when none`,
	"activitySeconds":     "how long the current activity has run, in seconds",
	"secondsSinceOutput":  "seconds since the agent or gate last wrote output (or since it started)",
	"iterationSeconds":    "seconds since the current agent iteration started; 0 outside one",
	"iterations":          "the agent iterations the change has run, over every apply of the project (they go on counting across runs)",
	"tokensUsed":          "the tokens the change's agent has used so far",
	"tokenBudget":         "the change's token budget, from budgets.tokens by its size; 0 when none",
	"retries.verify":      "the verify retries the change has used",
	"retries.integration": "the integration retries the change has used",
	"retries.conflicts":   "the merge conflicts the change went back to its agent for",
	"restarts":            "the sentinel's restarts and redispatches of the change",
	"lastExit.code":       "the exit status of the last agent iteration; -1 when a signal ended it; 0 while an iteration runs",
	"lastExit.signal":     `the signal that ended the last agent iteration, e.g. "SIGKILL"; "" when none`,
	"lastExit.apiError":   "whether the last agent iteration ended because the model's API failed",
}

var gateExamples = []Example{
	{`change.type in ["feature", "fix"]`, "only features and fixes"},
	{`len(change.requirements) > 0`, "changes that implement a requirement"},
	{`change.size == "L" || len(change.dependsOn) > 1`, "large changes, or changes that join two branches of the plan"},
	{`any(change.scope, {# startsWith "web/"})`, "changes allowed to touch web/"},
	{`any(files, {# endsWith ".tsx"})`, "changes whose diff touches a .tsx file (decided at run time)"},
}

var sentinelExamples = []Example{
	{`activity == "agent" && secondsSinceOutput > 120`, "an agent silent for two minutes"},
	{`activity == "gate:test" && activitySeconds > 900`, "a test gate running for more than 15 minutes"},
	{`lastExit.signal != ""`, "the agent's process was ended by a signal"},
	{`tokenBudget > 0 && tokensUsed >= tokenBudget * 0.8`, "the change has spent 80 % of its token budget"},
	{`retries.verify >= 2 && iterationSeconds > 1800`, "a change sent back twice whose iteration runs for half an hour"},
}

// envNames lists the names of an environment struct in declaration order,
// descending into nested structs (change → change.name, …).
func envNames(t reflect.Type) []Name {
	var out []Name
	var walk func(t reflect.Type, prefix string, runTime bool)
	walk = func(t reflect.Type, prefix string, runTime bool) {
		for f := range exprFields(t) {
			name := prefix + f.Tag.Get("expr")
			rt := runTime || f.Tag.Get("known") == "run"
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, name+".", rt)
				continue
			}
			out = append(out, Name{Name: name, Type: userType(f.Type), RunTime: rt, Doc: docs[name]})
		}
	}
	walk(t, "", false)
	return out
}

// exprFields are the fields of struct t a condition can read: all but
// those tagged expr:"-".
func exprFields(t reflect.Type) iter.Seq[reflect.StructField] {
	return func(yield func(reflect.StructField) bool) {
		for f := range t.Fields() {
			if f.Tag.Get("expr") != "-" && !yield(f) {
				return
			}
		}
	}
}

// runTimeNames are the top-level names of an environment whose values
// exist only at run time (tagged known:"run").
func runTimeNames(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if f.Tag.Get("known") == "run" {
			out = append(out, f.Tag.Get("expr"))
		}
	}
	return out
}

// fieldNames are the expr names of struct t's fields, sorted.
func fieldNames(t reflect.Type) []string {
	var out []string
	for f := range exprFields(t) {
		out = append(out, f.Tag.Get("expr"))
	}
	sort.Strings(out)
	return out
}

// userType names a Go type in the words of the help: numbers are numbers,
// slices are lists, structs are called by the expr name that reaches them.
// It returns "" for a type the environments do not use.
func userType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "number"
	case reflect.Slice:
		if elem := userType(t.Elem()); elem != "" && !strings.Contains(elem, " ") {
			return "list of " + elem + "s"
		}
	}
	return ""
}

// vocabulary translates the Go type names expr prints in its messages
// ("[]string", "config.Change", "float64") into user terms, for every type an
// environment reaches.
type vocabulary struct {
	// words maps a Go type name to its user term.
	words map[string]string
	// fields maps the Go name of a struct type to its expr field names,
	// sorted.
	fields map[string][]string
}

func newVocabulary(env reflect.Type) vocabulary {
	v := vocabulary{words: map[string]string{}, fields: map[string][]string{}}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for f := range exprFields(t) {
			if f.Type.Kind() == reflect.Struct {
				v.words[f.Type.String()] = f.Tag.Get("expr")
				v.fields[f.Type.String()] = fieldNames(f.Type)
				walk(f.Type)
				continue
			}
			if w := userType(f.Type); w != "" {
				v.words[f.Type.String()] = w
			}
		}
	}
	walk(env)
	// expr's own results, e.g. of len() or a division.
	for _, t := range []reflect.Type{reflect.TypeFor[int](), reflect.TypeFor[float64](), reflect.TypeFor[bool]()} {
		v.words[t.String()] = userType(t)
	}
	return v
}
