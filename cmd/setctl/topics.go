package main

import (
	"fmt"
	"strings"

	"github.com/set-engine/set/engine/cond"
)

// topic is a help page that is not a command: `setctl help NAME` prints
// its text to stdout.
type topic struct {
	name    string
	summary string
	text    func() string
}

func topics() []topic {
	return []topic{conditionsTopic()}
}

func conditionsTopic() topic {
	return topic{
		name:    "conditions",
		summary: "the names and types a `when` condition can use, with examples",
		text:    conditionsHelp,
	}
}

// conditionsHelp is `setctl help conditions`, generated from the condition
// environments of engine/cond so that it lists exactly what compiles. The
// README holds the same text (TestREADMEConditions).
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
