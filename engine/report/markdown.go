package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/set-engine/set/engine/english"
)

// Markdown writes r as the run report, .set/report.md: the run, each
// change's outcome and time per stage, gate runs and retries, the model
// calls by role and the coverage of the requirements.
func Markdown(w io.Writer, r Report) error {
	var b strings.Builder
	title := "Run " + r.Run.ID
	if r.Run.ID == "" {
		title = "No run yet"
	}
	fmt.Fprintf(&b, "# %s: %s\n\n", title, RunLine(r.Run))
	if !r.Run.Started.IsZero() {
		fmt.Fprintf(&b, "Started %s, last event %s, %s.\n", stamp(r.Run.Started), stamp(r.Run.LastEvent), Duration(r.Run.DurationMS))
	}
	fmt.Fprintf(&b, "%d of %s on main.\n", r.Run.OnMain, english.Plural(r.Run.Changes, "change"))

	b.WriteString("\n## Changes\n\n")
	b.WriteString("| change | outcome | iterations | gate runs (pass / fail / warn) | retries (verify, integration) | tokens | cost |\n")
	b.WriteString("| --- | --- | ---: | --- | --- | ---: | ---: |\n")
	for _, c := range r.Changes {
		fmt.Fprintf(&b, "| %s | %s | %d | %d (%d / %d / %d) | %s, %s | %s | %s |\n",
			c.Name, outcome(c), c.Iteration, c.Gates.Runs, c.Gates.Passed, c.Gates.Failed, c.Gates.Warned,
			Used(c.Retries.Verify, Count), Used(c.Retries.Integration, Count), TokensCell(c), CostCell(c))
	}

	b.WriteString("\n## Time per stage\n\n")
	b.WriteString("| change | waiting | agent | verify | merge queue | integration |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range r.Changes {
		s := c.Stages
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.Name,
			Duration(s.WaitMS), Duration(s.AgentMS), Duration(s.VerifyMS), Duration(s.QueueMS), Duration(s.IntegrateMS))
	}

	var open []Change
	for _, c := range r.Changes {
		if c.Status != "archived" {
			open = append(open, c)
		}
	}
	if len(open) > 0 {
		b.WriteString("\n## Not on main\n\n")
		for _, c := range open {
			fmt.Fprintf(&b, "- **%s** (%s): %s\n", c.Name, c.Status, Why(c))
		}
		b.WriteString("\nA new `setctl apply` retries failed and blocked changes with fresh budgets;\n`setctl explain CHANGE` tells a change's story.\n")
	}

	b.WriteString("\n## Model calls by role\n\n")
	if len(r.Roles) == 0 {
		b.WriteString("No model calls were recorded (an exec or replay agent reports none).\n")
	} else {
		b.WriteString("| role | calls | input | output | cache read | cache write | cost |\n")
		b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
		for _, role := range r.Roles {
			t := role.Tokens
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", role.Name, role.Calls,
				english.Tokens(t.Input), english.Tokens(t.Output), english.Tokens(t.CacheRead), english.Tokens(t.CacheWrite), Cost(role.CostUSD))
		}
	}

	b.WriteString("\n## Requirements\n\n")
	if len(r.Coverage) == 0 {
		b.WriteString("The plan names no requirement.\n")
	} else {
		b.WriteString("| requirement | change | status | commit on main |\n")
		b.WriteString("| --- | --- | --- | --- |\n")
		for _, c := range r.Coverage {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Requirement, c.Change, c.Status, orDash(c.Commit))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RunLine says where the run stands, in a few words and without a clock:
// "running (PID 4242)", "not running", "finished: success". (setctl
// status adds what needs one: how long ago the last heartbeat was.)
func RunLine(r Run) string {
	switch r.State {
	case Running, Starting:
		if r.PID > 0 {
			return fmt.Sprintf("%s (PID %d)", r.State, r.PID)
		}
	case Finished:
		return "finished: " + r.Result
	}
	return r.State
}

// Why says why a change that is not on main is where it is: why it failed
// or is blocked, what it waits for, or what runs for it.
func Why(c Change) string {
	switch {
	case c.Error != "":
		return c.Error
	case c.Waiting != "":
		return "waits for " + c.Waiting
	case c.Activity != nil:
		return "at work: " + c.Activity.Name
	}
	return "at work"
}

// outcome is where a change ended up: on main with its commit, or its
// status.
func outcome(c Change) string {
	if c.Status == "archived" && c.Commit != "" {
		return "on main at " + Short(c.Commit)
	}
	return c.Status
}

// Used is "used/budget", or "used" when there is no budget, each
// formatted by f.
func Used(b Budgeted, f func(int64) string) string {
	if b.Budget == 0 {
		return f(b.Used)
	}
	return f(b.Used) + "/" + f(b.Budget)
}

// TokensCell and CostCell are change c's tokens against its budget and
// its cost, for a table: "-" when no model call was journaled for it
// (Calls is 0), where 0 would claim what set cannot know, as setctl runs
// shows a run that journaled none.
func TokensCell(c Change) string {
	if c.Calls == 0 {
		return "-"
	}
	return Used(c.Tokens, english.Tokens)
}

// CostCell: see TokensCell.
func CostCell(c Change) string {
	if c.Calls == 0 {
		return "-"
	}
	return Cost(c.CostUSD)
}

// TokensAndCost is change c's tokens against its budget and its cost,
// for a sentence: "1.2k/2.0M tokens, $0.12", or "tokens and cost not
// reported" when no model call was journaled for it (Calls is 0).
func TokensAndCost(c Change) string {
	if c.Calls == 0 {
		return "tokens and cost not reported"
	}
	return Used(c.Tokens, english.Tokens) + " tokens, " + Cost(c.CostUSD)
}

// Count is n in decimal, a formatter for Used.
func Count(n int64) string { return fmt.Sprint(n) }

// Cost is an amount in US dollars.
func Cost(usd float64) string { return fmt.Sprintf("$%.2f", usd) }

// Duration is a number of milliseconds, rounded to the second (to the
// tenth below a minute).
func Duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// Short is a commit's first ten hex digits.
func Short(commit string) string {
	if len(commit) > 10 {
		return commit[:10]
	}
	return commit
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return Short(s)
}
