package orchestrator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/journal"
)

// instantAgent writes one file and reports success at once.
type instantAgent struct{}

func (instantAgent) Name() string { return "instant" }
func (instantAgent) Run(_ context.Context, req agent.Request) (agent.Result, error) {
	err := os.WriteFile(filepath.Join(req.Worktree, req.Change+".txt"), []byte(req.Change+"\n"), 0o644)
	return agent.Result{Done: err == nil, Calls: []agent.Call{{Tokens: journal.Tokens{Input: 10, Output: 5}}}}, err
}

// BenchmarkApply50 runs a 50-change DAG (each change depends on up to two
// earlier ones) at maxParallel 4 with an instant agent and trivial gates
// (`true`), and reports, from the journal's timestamps:
//   - overhead-ms/change: wall time of the run divided by the changes (all
//     of it is orchestration: worktrees, commits, merges, journal fsyncs;
//     the DAG's depth, not maxParallel, bounds how much of it overlaps);
//   - pipeline-ms/change: one change's own way from DISPATCH to ARCHIVED;
//   - agent→gate-ms: agent exit to the start of the first verify gate;
//   - gate→queue-ms: the last verify gate's pass to MERGE_QUEUED.
func BenchmarkApply50(b *testing.B) {
	const n = 50
	var overhead, pipeline, agentToGate, gateToQueue []float64
	for b.Loop() {
		b.StopTimer()
		f := newFixture(b)
		f.project.MaxParallel = 4
		f.project.Gates = map[string]config.Gate{"ok": {Kind: "exec", Mode: "run", Order: 1, Run: []string{"true"}}}
		f.project.Stacks = map[string]config.Stack{"feature": {"ok": {}}}
		f.project.Integration = config.Stack{"ok": {}}
		for i := range n {
			var deps []string
			if i > 0 {
				deps = append(deps, fmt.Sprintf("c%02d", (i-1)/2))
			}
			if i > 3 {
				deps = append(deps, fmt.Sprintf("c%02d", i-3))
			}
			f.change(fmt.Sprintf("c%02d", i), slices.Compact(deps)...)
		}
		b.StartTimer()
		start := time.Now()
		sum, err := f.apply(context.Background(), instantAgent{})
		elapsed := time.Since(start)
		b.StopTimer()
		if err != nil || sum.Result != "success" {
			b.Fatalf("run: %v %+v", err, sum)
		}
		overhead = append(overhead, float64(elapsed.Milliseconds())/n)
		a, g := reactionLatencies(f.events())
		pipeline = append(pipeline, pipelineLatencies(f.events())...)
		agentToGate = append(agentToGate, a...)
		gateToQueue = append(gateToQueue, g...)
		b.StartTimer()
	}
	b.ReportMetric(mean(overhead), "overhead-ms/change")
	b.ReportMetric(mean(pipeline), "pipeline-ms/change")
	b.ReportMetric(mean(agentToGate), "agent→gate-ms")
	b.ReportMetric(percentile(agentToGate, 0.95), "agent→gate-p95-ms")
	b.ReportMetric(mean(gateToQueue), "gate→queue-ms")
	b.ReportMetric(percentile(gateToQueue, 0.95), "gate→queue-p95-ms")
}

// reactionLatencies measures, per change, agent exit → first gate start
// and last gate end → MERGE_QUEUED, from event times and durations.
func reactionLatencies(events []journal.Event) (agentToGate, gateToQueue []float64) {
	agentStart := map[string]time.Time{}
	agentExit := map[string]time.Time{}
	lastGate := map[string]time.Time{}
	seenGate := map[string]bool{}
	for _, e := range events {
		switch e.Type {
		case journal.AgentSessionDecision:
			agentStart[e.Change] = e.Time
		case journal.AgentIteration:
			d, _ := journal.Decode[journal.AgentIterationData](e)
			agentExit[e.Change] = agentStart[e.Change].Add(time.Duration(d.DurationMS) * time.Millisecond)
			seenGate[e.Change] = false
		case journal.VerifyGate:
			d, _ := journal.Decode[journal.VerifyGateData](e)
			if d.Stage != "verify" {
				continue
			}
			if !seenGate[e.Change] {
				seenGate[e.Change] = true
				gateStart := e.Time.Add(-time.Duration(d.DurationMS) * time.Millisecond)
				agentToGate = append(agentToGate, ms(gateStart.Sub(agentExit[e.Change])))
			}
			lastGate[e.Change] = e.Time
		case journal.MergeQueued:
			gateToQueue = append(gateToQueue, ms(e.Time.Sub(lastGate[e.Change])))
		}
	}
	return agentToGate, gateToQueue
}

// pipelineLatencies measures, per change, DISPATCH to ARCHIVED.
func pipelineLatencies(events []journal.Event) []float64 {
	dispatched := map[string]time.Time{}
	var out []float64
	for _, e := range events {
		switch e.Type {
		case journal.Dispatch:
			dispatched[e.Change] = e.Time
		case journal.Archived:
			out = append(out, ms(e.Time.Sub(dispatched[e.Change])))
		}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[int(p*float64(len(s)-1))]
}
