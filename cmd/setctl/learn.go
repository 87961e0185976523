package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/history"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/learn"
	"github.com/set-engine/set/engine/learn/learncue"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/rundir"
)

func learnCommand() command {
	return command{
		name:    "learn",
		summary: "propose learnings from the failures that recurred in the kept runs",
		usage: `Usage: setctl learn [--run ID]... [--json] [--write]
       setctl learn --report [--json]

Learn reads the journal of the kept runs (.set/events.jsonl) for
episodes: a gate that failed a change, one episode per line of the
failure, and the change's later round in which it passed; a merge
conflict of a change on a path; a sentinel rule that fired. An episode's
signature names what went wrong the same way in every change and run:
"verify gate doc: every file needs a header comment: <file>", the
failure's line with paths as <file>, commit hashes as <sha> and other
numbers as <n>; "verify gate rules: forbidden no-println in *.go", a
rules-gate finding's rule and the pattern of the files it was broken
in; "conflict: go.mod".

A signature seen in at least learn.threshold changes, or in as many runs
(set.cue; 2 by default), is proposed as a learning, unless a learning of
the project already names it (its signature):
  convention  from a gate's failure: a sentence for agents' prompts that
              names the gate and quotes the failure's line
  planning    from a conflict: the changes that may touch the path are
              planned one after another (serialise)
Each proposal shows its ID (the same for the same signature every time),
its kind and name, its text, and its evidence: the run, change, round and
line of each episode. The text is built from the evidence alone, with no
model, so the same journal gives the same proposals.

The lines of a gate with a failures pattern are the failures it names.
A line that names a function or a test of its own in each change is a
failure of its own in each: when a gate failed enough changes that way,
setctl learn says so, and a failures pattern that captures only what the
lines share makes them one failure from the next run on.

--run ID reads only the episodes of that run (repeat it for more);
without it, every kept run. A change a resumed run carried on is followed
across runs either way.

--write adds the proposals to learnings.cue, beside set.cue in the same
package (it is created when missing; what it holds is kept, and a
learning it names already is not written again). Nothing is adopted
until you commit it: read the file, edit or delete what you disagree
with, check it with setctl vet, and commit learnings.cue. The next
setctl apply then enforces what you committed.

In pull-request delivery (delivery.mode "pull-request"), --write leaves
the checkout alone and opens the proposals as a pull request of their
own: learnings.cue as the remote's main holds it, with the proposals
added, committed on top of that main and pushed as the branch
set/learnings (refused while the remote has that branch: merge or close
the pull request before, and delete it). Merging it adopts them.

With --json, stdout carries one JSON document: "version" (1; within it
fields are only added) and "proposals", each with "id", "name", "kind",
"text", "signature", "serialise" (planning), "changes" and "runs" (how
many distinct ones the evidence has) and "evidence" (each "run",
"change", "round" and "line"); with --write, "written" too: "path",
"added", "present" (names the file had already) and, in pull-request
delivery, "pullRequest" ("number", "url", "branch", "commit").

` + learnReportUsage + `
Exit status: 0 when the journal was read (with or without proposals), 1
otherwise.

Examples:
  setctl learn
  setctl learn --run 20261127T075756Z --json | jq -r '.proposals[].text'
  setctl learn --write && setctl vet && git add learnings.cue && git commit -m "learnings: adopt"
  setctl learn --report --json | jq -r '.learnings[] | select(.remove) | .name + ": " + .remove'
`,
		run: runLearn,
	}
}

// LearnFormatVersion is the version of setctl learn --json. Within a
// version fields are only added.
const LearnFormatVersion = 1

// learnResult is setctl learn --json.
type learnResult struct {
	Version   int              `json:"version"`
	Proposals []learn.Proposal `json:"proposals"`
	Written   *learnWritten    `json:"written,omitempty"`
}

// learnWritten is what --write did, paths relative to the project.
// PullRequest is the pull request it opened in pull-request delivery
// instead of writing the file (nil when it wrote the file, or had
// nothing to add).
type learnWritten struct {
	Path        string            `json:"path"`
	Added       []string          `json:"added"`
	Present     []string          `json:"present"`
	PullRequest *learnPullRequest `json:"pullRequest,omitempty"`
}

func runLearn(e *env, args []string) int {
	c := learnCommand()
	fs := c.flagSet(e)
	only := fs.StringArray("run", nil, "read only the episodes of the run with this ID (repeatable)")
	asJSON := fs.Bool("json", false, "write the proposals as one JSON document (format above)")
	write := fs.Bool("write", false, "add the proposals to learnings.cue for you to review and commit (a pull request in pull-request delivery)")
	report := fs.Bool("report", false, "measure the adopted learnings instead (see --report above)")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	if *report && (len(*only) > 0 || *write) {
		return c.usageError(e, "--report measures every kept run: it takes neither --run nor --write")
	}
	root, err := load.FindRoot(e.dir)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	ws, err := loadWorkspace(root)
	if ws.cfg == nil {
		return ws.report(e, c.name, err)
	}
	events, err := journal.ReadFile(rundir.New(root).Events())
	if errors.Is(err, os.ErrNotExist) || err == nil && len(events) == 0 {
		return e.errorf(c.name, "%v", errNoRun)
	}
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	if *report {
		return runLearnReport(e, c.name, ws.cfg, events, *asJSON)
	}
	eps, read, err := episodesOf(events, failurePatterns(ws.cfg), *only)
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	proposals := learn.Propose(eps, ws.cfg.Learn.Threshold, ws.cfg.Named())
	// answered counts the failures that recurred as often but that a
	// learning of the project names already, which the text says, so
	// that it does not claim nothing recurred after a --write.
	answered := len(learn.Propose(eps, ws.cfg.Learn.Threshold, nil)) - len(proposals)
	res := learnResult{Version: LearnFormatVersion, Proposals: proposals}
	if res.Proposals == nil {
		res.Proposals = []learn.Proposal{}
	}
	switch {
	case !*write || len(proposals) == 0:
		// Nothing to write: the file is left as it is, the forge not asked.
	case ws.cfg.Delivery.ProposesPullRequests():
		if res.Written, err = proposeLearnings(context.Background(), e, ws, proposals); err != nil {
			return ws.report(e, c.name, err)
		}
	default:
		w, err := learncue.WriteCUE(root, proposals)
		if err != nil {
			return e.errorf(c.name, "%v", err)
		}
		rel, _ := filepath.Rel(root, w.Path)
		res.Written = &learnWritten{Path: filepath.ToSlash(rel), Added: nonNil(w.Added), Present: nonNil(w.Present)}
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		err = writeLearn(e.stdout, res, ws.cfg.Learn.Threshold, len(history.Runs(events)), read, answered)
	}
	if err != nil {
		return e.errorf(c.name, "%v", err)
	}
	if !*asJSON {
		writeScattered(e.stdout, learn.ScatteredGates(eps, ws.cfg.Learn.Threshold))
	}
	return exitOK
}

// episodesOf is the episodes of the journal's events, of the runs only
// names when it names any, and how many distinct runs it names (a run
// named twice is read once). The episodes are read from the whole journal
// either way, so that a change a later run resumed is followed to its fix;
// a failure that recorded no failures is read by its gate's pattern in
// patterns (see failurePatterns).
func episodesOf(events []journal.Event, patterns map[string]*regexp.Regexp, only []string) ([]learn.Episode, int, error) {
	eps := learn.Episodes(events, patterns)
	if len(only) == 0 {
		return eps, 0, nil
	}
	runs := history.Runs(events)
	want := map[string]bool{}
	for _, id := range only {
		r, err := history.Find(runs, id)
		if err != nil {
			return nil, 0, err
		}
		want[r.ID] = true
	}
	return slices.DeleteFunc(eps, func(ep learn.Episode) bool { return !want[ep.Run] }), len(want), nil
}

// failurePatterns are the failures patterns the project's gates have
// today, by gate name: setctl learn reads by them the failures of the
// kept runs that recorded none (a run before the pattern was added), so
// that a pattern groups the runs before it as it groups those after it.
// A gate without a pattern has none; a pattern that does not compile
// (setctl vet reports it) is left out.
func failurePatterns(p *config.Project) map[string]*regexp.Regexp {
	out := map[string]*regexp.Regexp{}
	for name, g := range p.Gates {
		if g.Failures == "" {
			continue
		}
		if re, err := regexp.Compile(g.Failures); err == nil {
			out[name] = re
		}
	}
	return out
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// writeLearn writes the proposals, one block each, and what --write did.
// answered is how many failures recurred as often as the proposals' but
// have a learning of the project already.
func writeLearn(w io.Writer, res learnResult, threshold, runs, only, answered int) error {
	if len(res.Proposals) == 0 {
		read := english.Plural(runs, "kept run")
		if only > 0 {
			read = english.Plural(only, "run")
		}
		if answered > 0 {
			_, err := fmt.Fprintf(w, "No learning to propose: %s of the %s that recurred in %d changes or %d runs (learn.threshold) %s a learning of the project already (by its signature).\n",
				english.Plural(answered, "failure"), read, threshold, threshold, hasHave(answered))
			return err
		}
		_, err := fmt.Fprintf(w, "No learning to propose: no failure of the %s recurred in %d changes or %d runs (learn.threshold).\n", read, threshold, threshold)
		return err
	}
	for i, p := range res.Proposals {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s  %s %s\n", p.ID, p.Kind, p.Name)
		fmt.Fprintf(w, "  %s\n", p.Text)
		fmt.Fprintf(w, "  signature: %s\n", p.Signature)
		if len(p.Serialise) > 0 {
			fmt.Fprintf(w, "  serialise: %s\n", strings.Join(p.Serialise, ", "))
		}
		fmt.Fprintf(w, "  seen in %s and %s:\n", english.Plural(p.Changes, "change"), english.Plural(p.Runs, "run"))
		for _, ev := range p.Evidence {
			where := ev.Run + " " + ev.Change
			if ev.Round > 0 {
				where += fmt.Sprintf(" round %d", ev.Round)
			}
			fmt.Fprintf(w, "    %s: %s\n", where, ev.Line)
		}
	}
	fmt.Fprintln(w)
	if answered > 0 {
		fmt.Fprintf(w, "%s that recurred as often %s a learning of the project already (by its signature).\n", english.Plural(answered, "more failure"), hasHave(answered))
	}
	wr := res.Written
	if wr == nil {
		_, err := fmt.Fprintf(w, "%s. setctl learn --write adds %s to learnings.cue for you to review and commit.\n",
			english.Plural(len(res.Proposals), "proposal"), them(len(res.Proposals)))
		return err
	}
	if len(wr.Present) > 0 {
		fmt.Fprintf(w, "%s has %s already, left as it is: %s.\n", wr.Path, english.Plural(len(wr.Present), "learning"), strings.Join(wr.Present, ", "))
	}
	if len(wr.Added) == 0 {
		_, err := fmt.Fprintf(w, "Nothing new to write to %s.\n", wr.Path)
		return err
	}
	if pr := wr.PullRequest; pr != nil {
		_, err := fmt.Fprintf(w, "Opened pull request #%d (%s), branch %s, adding %s to %s: %s.\nNothing is adopted until it is merged: review it, edit or delete what you disagree with, and merge it. The next setctl apply enforces what main holds.\n",
			pr.Number, pr.URL, pr.Branch, english.Plural(len(wr.Added), "learning"), wr.Path, strings.Join(wr.Added, ", "))
		return err
	}
	_, err := fmt.Fprintf(w, "Wrote %s to %s: %s.\nNothing is adopted yet: read %[2]s, edit or delete what you disagree with, check it with setctl vet, and commit it. The next setctl apply enforces what you committed.\n",
		english.Plural(len(wr.Added), "learning"), wr.Path, strings.Join(wr.Added, ", "))
	return err
}

func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
