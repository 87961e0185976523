package dashboard

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// Span kinds: what a span of the activity timeline is.
const (
	SpanAgent     = "agent"     // an agent iteration
	SpanGate      = "gate"      // a gate run (a baseline gate has no change)
	SpanLLM       = "llm"       // a model call
	SpanQueue     = "queue"     // waiting in the merge queue
	SpanIntegrate = "integrate" // the merge queue integrating the change
	SpanMerge     = "merge"     // main moving to the change's commit (an instant)
)

// Span is one activity on the time axis.
type Span struct {
	// Change is the change it is of; "" for the run's own (the planner's
	// model calls, the baseline's gates).
	Change string    `json:"change"`
	Kind   string    `json:"kind"`
	Label  string    `json:"label"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	// Open: it had not ended by End: it still runs, or (once the run is
	// over) its run stopped before its end was journaled.
	Open bool `json:"open,omitempty"`
	// Result is how it ended: an iteration's result, a gate's verdict, a
	// call's "ok" or "error", "cut short" when a new run or the end of
	// the run ended it, the status a queue or integration led to.
	Result string `json:"result,omitempty"`
	// Seq is the event that ended it, or that started it while it is
	// open; Data that event's payload, for the span's detail.
	Seq  int64           `json:"seq"`
	Type journal.Type    `json:"type"`
	Data json.RawMessage `json:"data"`
	// Log is its output, relative to the project.
	Log string `json:"log,omitempty"`
}

// TimelineView is the activity timeline of a project's journal.
type TimelineView struct {
	// Start and End bound the time axis: the first event, and now while
	// the run goes, else the last event.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// Changes are the rows, in plan order (the run's own spans aside).
	Changes []string `json:"changes"`
	Spans   []Span   `json:"spans"`
	// Bands are the changes' verify rounds and integration attempts,
	// which group their spans.
	Bands []Band `json:"bands"`
}

// Timeline lays events (a journal, in Seq order) out as spans: each agent
// iteration from its AGENT_SESSION_DECISION to its AGENT_ITERATION, each
// gate from its GATE_STARTED to its VERIFY_GATE (or BASELINE_GATE), each
// model call over its duration, a change's time in the merge queue and in
// integration from its STATE_CHANGEs, and each merge as an instant.
// running says the run's apply still runs: what has not ended runs until
// now; otherwise it ends at the last event, still open.
func Timeline(events []journal.Event, running bool, now time.Time) TimelineView {
	t := &timeline{open: map[string]int{}}
	tl := TimelineView{Changes: []string{}, Spans: []Span{}, Bands: []Band{}}
	for _, e := range events {
		t.add(e)
	}
	if len(events) == 0 {
		return tl
	}
	end := events[len(events)-1].Time
	if running && now.After(end) {
		end = now
	}
	for _, i := range t.open {
		t.spans[i].End, t.spans[i].Open = end, true
	}
	tl.Start, tl.End = events[0].Time, end
	if t.spans != nil {
		tl.Spans = t.spans
	}
	return tl
}

// timeline is a Timeline being laid out.
type timeline struct {
	spans []Span
	// open maps an activity's key to its span, while it has no end.
	open map[string]int
	// last is the time of the last event added.
	last time.Time
}

// begin opens the span of key at e; a span of the same key still open
// ends there, cut short.
func (t *timeline) begin(key string, e journal.Event, sp Span) {
	t.end(key, e.Time, "cut short", nil)
	sp.Change, sp.Start, sp.End, sp.Seq, sp.Type, sp.Data = e.Change, e.Time, e.Time, e.Seq, e.Type, e.Data
	t.spans = append(t.spans, sp)
	t.open[key] = len(t.spans) - 1
}

// end ends the span of key, if one is open, at at with result; e, when
// given, is the event that ends it. It reports whether a span was open.
func (t *timeline) end(key string, at time.Time, result string, e *journal.Event) (*Span, bool) {
	i, ok := t.open[key]
	if !ok {
		return nil, false
	}
	delete(t.open, key)
	sp := &t.spans[i]
	sp.End, sp.Result = at, result
	if e != nil {
		sp.Seq, sp.Type, sp.Data = e.Seq, e.Type, e.Data
	}
	return sp, true
}

// whole adds a span that e ends and that lasted durationMS, for an end
// whose start was not journaled (or needs no event).
func (t *timeline) whole(e journal.Event, durationMS int64, sp Span) *Span {
	sp.Change, sp.Start, sp.End, sp.Seq, sp.Type, sp.Data = e.Change, e.Time.Add(-time.Duration(durationMS)*time.Millisecond), e.Time, e.Seq, e.Type, e.Data
	t.spans = append(t.spans, sp)
	return &t.spans[len(t.spans)-1]
}

// endAll ends every open span at at: a new run, or the end of one, ends
// what the run before left running.
func (t *timeline) endAll(at time.Time) {
	for key := range t.open {
		t.end(key, at, "cut short", nil)
	}
}

func gateKey(change, stage, gate string, attempt int) string {
	return fmt.Sprintf("%s/gate/%s/%s/%d", change, stage, gate, attempt)
}

func (t *timeline) add(e journal.Event) {
	defer func() { t.last = e.Time }()
	switch e.Type {
	case journal.RunStarted:
		t.endAll(t.last)
	case journal.RunFinished:
		t.endAll(e.Time)
	case journal.AgentSessionDecision:
		d, err := journal.Decode[journal.AgentSessionDecisionData](e)
		if err != nil {
			return
		}
		t.begin(e.Change+"/agent", e, Span{Kind: SpanAgent, Label: iterationLabel(d.Iteration, d.Adapter, d.Model), Log: d.Log})
	case journal.AgentIteration:
		d, err := journal.Decode[journal.AgentIterationData](e)
		if err != nil {
			return
		}
		sp, ok := t.end(e.Change+"/agent", e.Time, d.Result, &e)
		if !ok {
			sp = t.whole(e, d.DurationMS, Span{Kind: SpanAgent, Label: iterationLabel(d.Iteration, "", ""), Result: d.Result})
		}
		sp.Log = d.Log
	case journal.LLMCall:
		d, err := journal.Decode[journal.LLMCallData](e)
		if err != nil {
			return
		}
		result := "ok"
		if d.Error != "" {
			result = "error"
		}
		t.whole(e, d.DurationMS, Span{Kind: SpanLLM, Label: strings.TrimSpace(d.Role + " " + d.Model), Result: result})
	case journal.GateStarted:
		d, err := journal.Decode[journal.GateStartedData](e)
		if err != nil {
			return
		}
		t.begin(gateKey(e.Change, d.Stage, d.Gate, d.Attempt), e, Span{Kind: SpanGate, Label: gateLabel(d.Stage, d.Gate, d.Attempt), Log: d.Log})
	case journal.VerifyGate:
		d, err := journal.Decode[journal.VerifyGateData](e)
		if err != nil {
			return
		}
		sp, ok := t.end(gateKey(e.Change, d.Stage, d.Gate, d.Attempt), e.Time, d.Result, &e)
		if !ok {
			sp = t.whole(e, d.DurationMS, Span{Kind: SpanGate, Label: gateLabel(d.Stage, d.Gate, d.Attempt), Result: d.Result})
		}
		if d.Log != "" {
			sp.Log = d.Log
		}
	case journal.BaselineGate:
		d, err := journal.Decode[journal.BaselineGateData](e)
		if err != nil {
			return
		}
		t.whole(e, d.DurationMS, Span{Kind: SpanGate, Label: "baseline " + d.Gate, Result: d.Result, Log: d.Log})
	case journal.MergeQueued:
		t.begin(e.Change+"/queue", e, Span{Kind: SpanQueue, Label: "merge queue"})
	case journal.StateChange:
		d, err := journal.Decode[journal.StateChangeData](e)
		if err != nil {
			return
		}
		if state.Status(d.From) == state.Queued {
			t.end(e.Change+"/queue", e.Time, d.To, &e)
		}
		if state.Status(d.From) == state.Integrating {
			t.end(e.Change+"/integrate", e.Time, d.To, &e)
		}
		if state.Status(d.To) == state.Integrating {
			t.begin(e.Change+"/integrate", e, Span{Kind: SpanIntegrate, Label: "integration"})
		}
	case journal.Merged:
		d, err := journal.Decode[journal.MergedData](e)
		if err != nil {
			return
		}
		t.whole(e, 0, Span{Kind: SpanMerge, Label: "main → " + short(d.Commit), Result: "merged"})
	}
}

func iterationLabel(n int, adapter, model string) string {
	l := fmt.Sprintf("iteration %d", n)
	if a := strings.TrimSpace(adapter + " " + model); a != "" {
		l += " (" + a + ")"
	}
	return l
}

func gateLabel(stage, gate string, attempt int) string {
	return fmt.Sprintf("%s %s #%d", stage, gate, attempt)
}

// short is a commit's short form.
func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
