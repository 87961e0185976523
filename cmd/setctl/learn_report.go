package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/dashboard"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/learn"
)

// LearnReportFormatVersion is the version of setctl learn --report
// --json. Within a version fields are only added, as for setctl status
// --json (report.FormatVersion).
const LearnReportFormatVersion = 1

// learnReportDoc is setctl learn --report --json: the standing of each
// learning set.cue adopts, ordered by name, and the expireAfter it was
// measured with.
type learnReportDoc struct {
	Version     int              `json:"version"`
	ExpireAfter int              `json:"expireAfter"`
	Learnings   []learn.Standing `json:"learnings"`
}

// learnReportUsage is what setctl learn's help says of --report.
const learnReportUsage = `With --report, setctl learn measures the learnings set.cue adopts
instead: for each one that names a signature, the run that adopted it
(the first run that enforced it) and how often its failure recurred in
the kept runs before that run and since (the changes and runs it
happened in, the retries it cost and the tokens spent on it), and it
proposes removing a learning whose failure has not recurred in
learn.expireAfter runs since its adoption, or never matched a failure of
the kept runs. A learning without a signature is enforced, not
measured. Removing one is a person's commit, as adopting it was. One
row per learning:

  LEARNING   its name in set.cue
  KIND       convention, planning or rule
  ADOPTED    the run that adopted it; "not yet" when no kept run did
  BEFORE     its failure in the runs before that run
  AFTER      its failure in that run and the runs since
  SINCE      the runs since its adoption, that run included
  QUIET      those of them since its failure last recurred

With --report --json, stdout carries one JSON document: "version" (1;
within it fields are only added), "expireAfter", and "learnings", each
with "name", "kind", "signature", "measured", "adopted", "before" and
"after" (each "episodes", "runs", "changes", "retries", "tokens"),
"runsSince", "quiet", "lastSeen" (the run its failure last happened
in) and "remove" (why its removal is proposed; absent when it is not).
`

// runLearnReport is setctl learn --report of the project cfg configures
// and its journal events (every kept run), written to e's stdout as a
// table, or as JSON.
func runLearnReport(e *env, name string, cfg *config.Project, events []journal.Event, asJSON bool) int {
	standings, err := learn.Report(events, learn.Episodes(events, failurePatterns(cfg)), cfg.Adopted(""), cfg.Learn.ExpireAfter)
	if err != nil {
		return e.errorf(name, "%v", err)
	}
	if asJSON {
		err = writeLearnReportJSON(e.stdout, standings, cfg.Learn.ExpireAfter)
	} else {
		err = writeLearnReport(e.stdout, standings, cfg.Learn.ExpireAfter)
	}
	if err != nil {
		return e.errorf(name, "%v", err)
	}
	return exitOK
}

// projectLearnings is what the dashboard's learnings page shows of the
// project cfg configures and its journal events: setctl learn's
// proposals and setctl learn --report.
func projectLearnings(cfg *config.Project, events []journal.Event) (dashboard.Learnings, error) {
	eps := learn.Episodes(events, failurePatterns(cfg))
	report, err := learn.Report(events, eps, cfg.Adopted(""), cfg.Learn.ExpireAfter)
	if err != nil {
		return dashboard.Learnings{}, err
	}
	return dashboard.Learnings{
		Proposals: learn.Propose(eps, cfg.Learn.Threshold, cfg.Named()),
		Report:    report, Threshold: cfg.Learn.Threshold, ExpireAfter: cfg.Learn.ExpireAfter,
	}, nil
}

// writeLearnReportJSON writes standings as setctl learn --report --json.
func writeLearnReportJSON(w io.Writer, standings []learn.Standing, expireAfter int) error {
	if standings == nil {
		standings = []learn.Standing{}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(learnReportDoc{Version: LearnReportFormatVersion, ExpireAfter: expireAfter, Learnings: standings})
}

// writeLearnReport writes standings as setctl learn --report's table,
// then the removals it proposes.
func writeLearnReport(w io.Writer, standings []learn.Standing, expireAfter int) error {
	if len(standings) == 0 {
		_, err := fmt.Fprintln(w, "set.cue adopts no learning yet: `setctl learn` proposes them from the kept runs.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LEARNING\tKIND\tADOPTED\tBEFORE\tAFTER\tSINCE\tQUIET")
	for _, s := range standings {
		if !s.Measured {
			fmt.Fprintf(tw, "%s\t%s\tnot measured: it names no signature\n", s.Name, s.Kind)
			continue
		}
		adopted, since, quiet := "not yet", "-", "-"
		if s.Adopted != "" {
			adopted, since, quiet = s.Adopted, fmt.Sprint(s.RunsSince), fmt.Sprint(s.Quiet)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Kind, adopted, recurrence(s.Before), recurrence(s.After), since, quiet)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var removals []learn.Standing
	for _, s := range standings {
		if s.Remove != "" {
			removals = append(removals, s)
		}
	}
	if len(removals) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nProposed for removal (learn.expireAfter is %s; a commit deletes each from learnings.cue or set.cue, or turns off one a profile gives with enabled: false):\n", english.Plural(expireAfter, "run"))
	for _, s := range removals {
		fmt.Fprintf(w, "  %s: %s\n", s.Name, s.Remove)
	}
	return nil
}

// recurrence says how often a signature recurred in some runs: "none",
// or its changes and runs, the retries it cost and, when the agents
// reported any, the tokens spent on it.
func recurrence(r learn.Recurrence) string {
	if r.Episodes == 0 {
		return "none"
	}
	s := fmt.Sprintf("%s in %s, %s", english.Plural(r.Changes, "change"), english.Plural(r.Runs, "run"), english.Plural(r.Retries, "retry"))
	if r.Tokens > 0 {
		s += ", " + english.Tokens(r.Tokens) + " tokens"
	}
	return s
}
