package baseline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/gate"
)

// tailLines is how many lines of a red gate's output RedError shows.
const tailLines = 10

// RedError stops a run whose blocking gates fail on main itself: every
// change would fail them too and be sent back for what it did not break.
// Its message shows each gate's command, the end of its output and its
// log, and the ways on, worded as what to type.
type RedError struct {
	// Gates are the blocking gates red on the main branch, in run order;
	// never empty. Messages name the branch as Verdict.Branch does.
	Gates []Verdict
	// Accepting is set when the run was asked to accept main's failures
	// (setctl apply --accept-baseline) and some of Gates cannot be
	// compared (see Verdict.Why): nothing was accepted.
	Accepting bool
	// Apply is how the user ran setctl apply: the ways on repeat it.
	Apply Invocation
}

// Invocation is how the user ran setctl apply, so that a message can say
// what to type next in the same form.
type Invocation struct {
	// Flags are the flags given to apply, as typed, without
	// --accept-baseline ("--yes", "--json").
	Flags []string
	// PlanFile is the plan file given to apply, as typed; "" when apply
	// made the plan itself.
	PlanFile string
}

// Command is the apply command line, with --accept-baseline when accept
// is set.
func (in Invocation) Command(accept bool) string {
	parts := append([]string{"setctl", "apply"}, in.Flags...)
	if accept {
		parts = append(parts, "--accept-baseline")
	}
	if in.PlanFile != "" {
		parts = append(parts, in.PlanFile)
	}
	return strings.Join(parts, " ")
}

func (e *RedError) Error() string {
	if e.Accepting {
		return e.refusal()
	}
	var b strings.Builder
	names := e.names(e.Gates)
	main := e.branch()
	fmt.Fprintf(&b, "%s fails %s %s before any change: every change would be blamed for it, so no agent was started.\n",
		main, map[bool]string{true: "gate", false: "gates"}[len(e.Gates) == 1], names)
	for _, v := range e.Gates {
		b.WriteString("\n" + block(v))
	}
	b.WriteString("\nTo go on, choose one:\n")
	n := e.fixChoices(&b, e.Gates)
	fmt.Fprintf(&b, "  %d. Make %s non-blocking: %s, then %s; failures are then reported, never sent to an agent.\n",
		n+1, names, warnSettings(e.Gates), e.afterEdit(false))
	n++
	var unknown, caused []Verdict
	for _, v := range e.Gates {
		switch {
		case v.Caused():
			caused = append(caused, v)
		case !v.Comparable():
			unknown = append(unknown, v)
		}
	}
	switch {
	case len(unknown) == 0 && len(caused) > 0:
		fmt.Fprintf(&b, "  %d. Accept %s's failures, once every gate runs there: %s; then run `%s`.\n", n+1, main, firstFix(caused), e.Apply.Command(true))
	case len(unknown) == 0:
		what := fmt.Sprintf("the %s %s has on %s", english.Plural(len(e.Gates[0].Failures), "failure"), e.Gates[0].Gate, main)
		if len(e.Gates) > 1 {
			counts := make([]string, len(e.Gates))
			for i, v := range e.Gates {
				counts[i] = fmt.Sprintf("%s: %d", v.Gate, len(v.Failures))
			}
			what = fmt.Sprintf("the failures these gates have on %s (%s)", main, strings.Join(counts, ", "))
		}
		fmt.Fprintf(&b, "  %d. Accept %s's failures: run `%s`; it records %s and fails a change only on failures %s does not have.\n",
			n+1, main, e.Apply.Command(true), what, main)
		if base := baseLacking(e.Gates); len(base) > 0 {
			verbs := map[bool][2]string{true: {"fails", "checks"}, false: {"fail", "check"}}[len(base) == 1]
			fmt.Fprintf(&b, "     Then %s, which %s for what the base lacks, %s nothing until the base has it.\n", e.names(base), verbs[0], verbs[1])
		}
	default:
		fmt.Fprintf(&b, "  %d. Accept %s's failures, once set can name each gate's failures: change set.cue as below, then %s:\n", n+1, main, e.afterEdit(true))
		for _, v := range unknown {
			fmt.Fprintf(&b, "     %s: %s; %s.\n", v.Gate, v.Why(), fixWhy(v))
		}
		if len(caused) > 0 {
			fmt.Fprintf(&b, "     And first, %s.\n", firstFix(caused))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// refusal is the message of an --accept-baseline that cannot accept.
func (e *RedError) refusal() string {
	var unknown []Verdict
	for _, v := range e.Gates {
		if !v.Comparable() {
			unknown = append(unknown, v)
		}
	}
	names := e.names(unknown)
	main := e.branch()
	var b strings.Builder
	fmt.Fprintf(&b, "--accept-baseline cannot accept the failures of %s on %s, so nothing was accepted and no agent was started.\n", names, main)
	for _, v := range unknown {
		b.WriteString("\n" + block(v))
		if !v.Caused() { // its block says why already
			fmt.Fprintf(&b, "  %s.\n", capitalize(v.Why()))
		}
	}
	b.WriteString("\nTo go on, choose one:\n")
	n := e.fixChoices(&b, unknown)
	fmt.Fprintf(&b, "  %d. Make %s non-blocking: %s, then %s.\n", n+1, names, warnSettings(unknown), e.afterEdit(false))
	n++
	var named, caused []Verdict
	for _, v := range unknown {
		if v.Caused() {
			caused = append(caused, v)
		} else {
			named = append(named, v)
		}
	}
	if len(named) == 0 {
		fmt.Fprintf(&b, "  %d. Let every gate run on %s first: %s; then run `%s` again.\n", n+1, main, firstFix(caused), e.Apply.Command(true))
		return strings.TrimRight(b.String(), "\n")
	}
	fmt.Fprintf(&b, "  %d. Let set name the failures: change set.cue as below, then %s:\n", n+1, e.afterEdit(true))
	for _, v := range named {
		fmt.Fprintf(&b, "     %s: %s.\n", v.Gate, fixWhy(v))
	}
	if len(caused) > 0 {
		fmt.Fprintf(&b, "     And first, %s.\n", firstFix(caused))
	}
	return strings.TrimRight(b.String(), "\n")
}

// fixChoices writes the first ways on, numbered from 1, for the red gates
// vs, and returns how many it wrote: fix main, for the gates that fail
// there on the host or wherever nothing tells otherwise; fix the base,
// for the gates that fail in a container and pass on the host
// (Verdict.BaseLacks), which fixing main would not make pass.
func (e *RedError) fixChoices(b *strings.Builder, vs []Verdict) int {
	base := baseLacking(vs)
	own := slices.DeleteFunc(slices.Clone(vs), Verdict.BaseLacks)
	main, n := e.branch(), 0
	if len(own) > 0 {
		n++
		fmt.Fprintf(b, "  %d. Fix %s: make %s pass on %s, commit, and run `%s` again.\n", n, main, e.names(own), main, e.Apply.Command(false))
	}
	if len(base) > 0 {
		n++
		names := e.names(base)
		fmt.Fprintf(b, "  %d. Fix the base: give the base (%s) what %s %s from this machine (compare the logs) and run `%s` again; or run %s on the host: %s, then %s.\n",
			n, base[0].Base, names, map[bool]string{true: "needs", false: "need"}[len(base) == 1], e.Apply.Command(false),
			names, hostSettings(base), e.afterEdit(false))
	}
	return n
}

// baseLacking is the verdicts of vs whose gates fail for what their base
// lacks (Verdict.BaseLacks).
func baseLacking(vs []Verdict) []Verdict {
	return slices.DeleteFunc(slices.Clone(vs), func(v Verdict) bool { return !v.BaseLacks() })
}

// hostSettings is what to write in set.cue to run gates on the host.
func hostSettings(vs []Verdict) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprintf("`gates: %s: runner: \"host\"`", v.Gate)
	}
	return "add " + english.List(s) + " to project in set.cue"
}

// afterEdit is what to do once set.cue is edited: apply runs the set.cue
// main holds and refuses one not committed there
// (project.CheckInputsCommitted), and a plan file made from the old
// set.cue is stale.
func (e *RedError) afterEdit(accept bool) string {
	commit := fmt.Sprintf("commit set.cue on %s (setctl apply runs the set.cue %s holds)", e.branch(), e.branch())
	if e.Apply.PlanFile == "" {
		return fmt.Sprintf("%s and run `%s` again", commit, e.Apply.Command(accept))
	}
	return fmt.Sprintf("%s, make a new plan with `setctl plan -out %s` and run `%s`", commit, e.Apply.PlanFile, e.Apply.Command(accept))
}

// branch is the main branch the gates were judged on.
func (e *RedError) branch() string { return e.Gates[0].Branch }

// names is "fmt", "fmt and vet", "build, fmt and vet".
func (e *RedError) names(vs []Verdict) string {
	n := make([]string, len(vs))
	for i, v := range vs {
		n[i] = v.Gate
	}
	return english.List(n)
}

// block shows one red gate: its command, how it ended, the end of its
// output and where the rest is.
func block(v Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", v.Gate, v.Command)
	ending := fmt.Sprintf("failed on %s with exit code %d", v.Branch, v.ExitCode)
	switch {
	case v.TimedOut:
		ending = v.Reason + " on " + v.Branch
	case v.Caused():
		ending = fmt.Sprintf("could not run on %s: %s (exit code %d)", v.Branch, v.Cause(), v.ExitCode)
	}
	lines := strings.Split(strings.TrimRight(v.Tail, "\n"), "\n")
	if v.Tail == "" {
		fmt.Fprintf(&b, "  %s; it printed nothing.\n", ending)
	} else {
		if len(lines) > tailLines {
			lines = lines[len(lines)-tailLines:]
		}
		fmt.Fprintf(&b, "  %s; the end of its output:\n", ending)
		for _, l := range lines {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	if v.Log != "" {
		fmt.Fprintf(&b, "  Full log: %s\n", v.Log)
	}
	switch {
	case v.BaseLacks():
		fmt.Fprintf(&b, "  It passes on this machine, on the same tree (log: %s): the base, %s, lacks something this machine has that %s needs.\n",
			v.HostLog, v.Base, v.Gate)
	case v.OnHost == gate.StatusFail:
		fmt.Fprintf(&b, "  It fails on this machine too, on the same tree (log: %s).\n", v.HostLog)
	}
	if v.Cached {
		fmt.Fprintf(&b, "  (judged before on this tree of %s: nothing ran again; delete .set/baseline.json to judge it anew)\n", v.Branch)
	}
	return b.String()
}

// warnSettings is what to write in set.cue to make gates non-blocking.
func warnSettings(vs []Verdict) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprintf("`gates: %s: mode: \"warn\"`", v.Gate)
	}
	return "add " + english.List(s) + " to project in set.cue"
}

// firstFix says, for each caused gate of vs, what to fix before its
// failures can be known: "lint could not run (…): make install pass
// first".
func firstFix(vs []Verdict) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.Gate + " " + causedFix(v)
	}
	return strings.Join(parts, "; ")
}

// causedFix says why the caused gate v failed and what to fix first,
// without naming it: the gates it follows from, or what it could not
// find.
func causedFix(v Verdict) string {
	if len(v.After) > 0 {
		return fmt.Sprintf("could not run (%s): make %s pass first", v.Cause(), english.List(v.After))
	}
	return fmt.Sprintf("could not run (%s): provide what it runs (in the project's dependencies, or on this machine; setctl doctor checks each gate's programs)", v.Cause())
}

// fixWhy says how to make a gate's failures comparable.
func fixWhy(v Verdict) string {
	switch {
	case v.Caused():
		return "it " + causedFix(v)
	case v.TimedOut:
		return fmt.Sprintf("give it more time: `gates: %s: timeout: \"30m\"` in set.cue", v.Gate)
	case v.Pattern != "":
		return fmt.Sprintf("if %s shows failures the pattern misses, correct `gates: %s: failures` in set.cue to name them; if the gate fails there without failures a change could also have, only choices 1 and 2 help", v.Log, v.Gate)
	}
	return fmt.Sprintf("add `gates: %s: failures: \"<RE2 pattern>\"` to project in set.cue; every match on a line of its output is one failure, named by the match's capture groups", v.Gate)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
