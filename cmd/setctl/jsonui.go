package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	set "github.com/set-engine/set"
	"github.com/set-engine/set/engine/coverage"
	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/orchestrator"
	"github.com/set-engine/set/engine/prune"
	"github.com/set-engine/set/engine/state"
)

// jsonUIVersion is the version of the stream `setctl apply --json`
// writes. A new minor version only adds fields or line types; anything
// else makes a new major version.
const jsonUIVersion = "1.3"

// Line types of the stream.
const (
	uiVersion    = "version"
	uiDiagnostic = "diagnostic"
	uiEvent      = "event"
	uiSummary    = "summary"
	uiPruned     = "pruned"
)

// uiLine is one line of the stream: the envelope every line has, then the
// fields of its type.
type uiLine struct {
	Level     string    `json:"@level"` // "info", "warn" or "error"
	Message   string    `json:"@message"`
	Timestamp time.Time `json:"@timestamp"`
	Type      string    `json:"type"`

	// version
	Setctl string `json:"setctl,omitempty"`
	UI     string `json:"ui,omitempty"`

	Diagnostic *uiDiag        `json:"diagnostic,omitempty"`
	Event      *journal.Event `json:"event,omitempty"`
	Summary    *uiRunSummary  `json:"summary,omitempty"`
	// Pruned is what a new run removed before it started, beyond the
	// project's history.keep (setctl prune --json's document).
	Pruned *prune.Result `json:"pruned,omitempty"`
}

// uiDiag is an error or warning that is not an event of a run: a bad
// configuration, a stale plan, a refusal to start, a run error. It is a
// diag.Diagnostic as JSON; since ui 1.1 it has its path and range.
type uiDiag struct {
	Severity string `json:"severity"` // "error" or "warning"
	Summary  string `json:"summary"`  // the first line of the text form
	Detail   string `json:"detail,omitempty"`
	// Path is the CUE path of the field at fault (project.gates.fmt.mode).
	Path string `json:"path,omitempty"`
	// Range is where the problem is, the file relative to the project.
	Range *uiRange `json:"range,omitempty"`
}

// uiRange is a position as Terraform's JSON diagnostics give it: line and
// column count from 1; column is 0 for a whole line, line 0 for a whole
// file.
type uiRange struct {
	Filename string `json:"filename"`
	Start    uiPos  `json:"start"`
}

type uiPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// uiRunSummary is how the run ended.
type uiRunSummary struct {
	// Result is "success", "failed" or "interrupted", as in RUN_FINISHED.
	Result     string `json:"result"`
	Resumed    bool   `json:"resumed"`
	DurationMS int64  `json:"durationMs"`
	// Changes maps every change of the run to its status: a resumed
	// run's include those merged before it was interrupted.
	Changes map[string]state.Status `json:"changes"`
	// Main is the commit main is at after the run.
	Main string `json:"main"`
	// Coverage is, since ui 1.2, where every requirement stands on main
	// after the run (see engine/coverage).
	Coverage []coverage.Row `json:"coverage"`
}

// jsonUI writes `setctl apply --json`: one JSON object per line on its
// writer and nothing else. The first line is the version of the stream;
// then come diagnostics and every event of the run, each as recorded in
// .set/events.jsonl, as it happens; the last line of a run is its
// summary. It is safe for concurrent use.
//
// Invariant: once the first event of the run is written, every event of
// the run is written exactly once, in Seq order: one the journal's
// subscription dropped (a reader slower than the run) is read back from
// events.jsonl.
type jsonUI struct {
	mu  sync.Mutex
	enc *json.Encoder
	now func() time.Time
	// main is the project's main branch, which event lines name.
	main string
	// eventsPath is the journal that dropped events are read back from.
	eventsPath string
	last       int64 // Seq of the last event written; 0 before the first
	finished   bool  // RUN_FINISHED was written
}

func newJSONUI(w io.Writer, now func() time.Time) *jsonUI {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &jsonUI{enc: enc, now: now}
}

// pruned writes what a new run removed before it started (keep is
// history.keep).
func (u *jsonUI) pruned(res prune.Result, keep int) {
	u.write(uiLine{Level: "info", Message: prunedNotice(res, keep), Timestamp: u.now(), Type: uiPruned, Pruned: &res})
}

// version writes the first line.
func (u *jsonUI) version() {
	u.write(uiLine{Level: "info", Message: "setctl " + set.ModuleVersion, Timestamp: u.now(), Type: uiVersion, Setctl: set.ModuleVersion, UI: jsonUIVersion})
}

// diagnose writes an error or a warning given as its message alone.
func (u *jsonUI) diagnose(severity diag.Severity, msg string) {
	d := load.Diagnostics(errors.New(msg))[0]
	d.Severity = severity
	u.diagnostic(d, "")
}

// diagnostic writes d, positions relative to root; it is env.diagnose.
func (u *jsonUI) diagnostic(d diag.Diagnostic, root string) {
	msg := d.Text(root)
	summary, detail, _ := strings.Cut(msg, "\n")
	detail = strings.Trim(detail, "\n") // a blank line may part it from the summary
	level := "error"
	if d.Severity == diag.Warning {
		level = "warn"
	}
	jd := &uiDiag{Severity: string(d.Severity), Summary: summary, Detail: detail, Path: strings.Join(d.Path, ".")}
	if d.Pos.File != "" {
		jd.Range = &uiRange{Filename: diag.RelFile(d.Pos.File, root), Start: uiPos{Line: d.Pos.Line, Column: d.Pos.Column}}
	}
	u.write(uiLine{Level: level, Message: msg, Timestamp: u.now(), Type: uiDiagnostic, Diagnostic: jd})
}

// start makes the stream ready for the events of a run whose journal is
// eventsPath and whose main branch is mainBranch.
func (u *jsonUI) start(mainBranch, eventsPath string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.main, u.eventsPath = mainBranch, eventsPath
}

// event writes e, after any event before it that the subscription
// dropped. It is orchestrator.Options.OnEvent.
func (u *jsonUI) event(e journal.Event) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.last > 0 && e.Seq > u.last+1 {
		u.readBack(e.Seq)
	}
	u.writeEvent(e)
}

// end writes the events of the run that the subscription dropped at its
// end, if any: the run is over, so they are all in the journal.
func (u *jsonUI) end() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.last > 0 && !u.finished {
		u.readBack(0)
	}
}

// readBack writes the events after u.last and before the one of Seq
// upTo (0: up to this run's RUN_FINISHED, or the end of the journal) from
// events.jsonl. u.mu is held.
func (u *jsonUI) readBack(upTo int64) {
	events, err := journal.ReadFile(u.eventsPath)
	if err != nil {
		u.writeLocked(uiLine{Level: "error", Message: err.Error(), Timestamp: u.now(), Type: uiDiagnostic,
			Diagnostic: &uiDiag{Severity: "error", Summary: "events missing from this stream: " + err.Error()}})
		return
	}
	for _, e := range events {
		if e.Seq <= u.last || (upTo > 0 && e.Seq >= upTo) || u.finished {
			continue
		}
		u.writeEvent(e)
	}
}

// writeEvent writes one event line: its @message and @level are the
// plain view's (describeEvent). u.mu is held.
func (u *jsonUI) writeEvent(e journal.Event) {
	l := describeEvent(e, u.main, noColors)
	msg := l.text
	if e.Change != "" {
		msg = e.Change + ": " + msg
	}
	u.writeLocked(uiLine{Level: l.level, Message: msg, Timestamp: e.Time, Type: uiEvent, Event: &e})
	u.last = e.Seq
	if e.Type == journal.RunFinished {
		u.finished = true
	}
}

// summary writes the last line of a run.
func (u *jsonUI) summary(s *orchestrator.Summary, head string, rows []coverage.Row) {
	level := map[string]string{"success": "info", "interrupted": "warn"}[s.Result]
	if level == "" {
		level = "error"
	}
	u.write(uiLine{
		Level: level, Message: fmt.Sprintf("Run %s in %s.", s.Result, s.Duration.Round(100*time.Millisecond)),
		Timestamp: u.now(), Type: uiSummary,
		Summary: &uiRunSummary{Result: s.Result, Resumed: s.Resumed, DurationMS: s.Duration.Milliseconds(), Changes: s.Statuses, Main: head, Coverage: rows},
	})
}

func (u *jsonUI) write(l uiLine) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.writeLocked(l)
}

// writeLocked writes one line. A write error (nobody reads any more) is
// dropped: the stream's end never ends the run. u.mu is held.
func (u *jsonUI) writeLocked(l uiLine) {
	l.Timestamp = l.Timestamp.UTC()
	_ = u.enc.Encode(l)
}
