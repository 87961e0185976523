package orchestrator

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/set-engine/set/engine/agent"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/plan"
)

// benchScale divides the durations of issue 16's scenarios (a 1 s agent,
// 1.5 s of verify gates, a 2 s integration stack), keeping the ratios
// between them: -bench.scale 4 runs 200 changes in under a minute, not
// three. The overhead does not shrink with the durations, so wall / lower
// bound compares with the figures only at 1, make bench's.
var benchScale = flag.Float64("bench.scale", 1, "divide BenchmarkApply's durations (a 1 s agent, 1.5 s of verify gates, a 2 s integration stack) by this")

// benchKeep, if set, is a directory BenchmarkApply copies each run's
// journal (<case>-events.jsonl) and git trace (<case>-git-trace2.json,
// GIT_TRACE2_EVENT's, with each git process's start and exit times) to,
// for a closer look at where a run spends its time.
var benchKeep = flag.String("bench.keep", "", "copy each BenchmarkApply run's journal and git trace to this directory")

// benchCase is one scenario of BenchmarkApply.
type benchCase struct {
	name string
	// changes and depth shape the generated DAG (depth 1: no
	// dependencies); seed makes it the same every time.
	changes, depth int
	seed           uint64
	// agent is how long the scripted agent works on a change; verify the
	// durations of the verify stack's gates, in order; integration those
	// of the integration stack's (none: one `true`, which takes no time
	// worth counting, in either).
	agent       time.Duration
	verify      []time.Duration
	integration []time.Duration
	// maxParallel is the project's (0: 4); speculative its
	// mergeQueue.speculative (0: 1, one change at a time).
	maxParallel, speculative int
}

func (bc benchCase) parallel() int { return cmp.Or(bc.maxParallel, 4) }

func (bc benchCase) stacked() int { return cmp.Or(bc.speculative, 1) }

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// scaledBy is the case with every duration divided by n.
func (bc benchCase) scaledBy(n float64) benchCase {
	div := func(d time.Duration) time.Duration { return time.Duration(float64(d) / n) }
	bc.agent = div(bc.agent)
	bc.verify = slices.Clone(bc.verify)
	for i := range bc.verify {
		bc.verify[i] = div(bc.verify[i])
	}
	bc.integration = slices.Clone(bc.integration)
	for i := range bc.integration {
		bc.integration[i] = div(bc.integration[i])
	}
	return bc
}

var benchCases = []benchCase{
	{name: "dag-50", changes: 50, depth: 8, seed: 16,
		agent: secs(1), verify: []time.Duration{secs(0.5), secs(1)}},
	{name: "dag-200", changes: 200, depth: 8, seed: 16,
		agent: secs(1), verify: []time.Duration{secs(0.5), secs(1)}},
	// The merge case as the issue measured it (44.3 s): 20 changes of a
	// 1 s agent, worked on at once (maxParallel 20), and a 2 s integration
	// stack each, one at a time or four stacked.
	{name: "independent-20", changes: 20, depth: 1, seed: 16, maxParallel: 20,
		agent: secs(1), integration: []time.Duration{secs(2)}},
	{name: "independent-20-spec4", changes: 20, depth: 1, seed: 16, maxParallel: 20, speculative: 4,
		agent: secs(1), integration: []time.Duration{secs(2)}},
}

// BenchmarkApply runs `apply` on the scenarios of issue 16 (maxParallel
// 4 unless the case says otherwise), with a scripted agent and exec gates of fixed durations
// (divided by -bench.scale, 1 by default), and reports:
//   - wall-s: the run's wall time;
//   - lower-bound-s: the same durations with no overhead at all, under
//     the same policy (see lowerBound);
//   - wall/lower-bound, and excess-ms/change: (wall − lower bound) / changes;
//   - cpu-ms/change: user+system CPU of this process (set) per change, and
//     child-cpu-ms/change that of the processes it waited for (git, gates);
//   - git/change: git processes started per change (git's own trace2
//     start events; git-top/change counts only those set started itself,
//     not git's own children);
//   - peak-rss-MB: the process's peak resident memory (run one case per
//     process, as `make bench` does, for it to be the case's);
//   - the reaction latencies of BenchmarkApply's events: agent exit to the
//     first verify gate, the last verify gate to MERGE_QUEUED, and DISPATCH
//     to ARCHIVED;
//   - where a change waits between them (see stageLatencies): handoff-ms,
//     its last dependency archived to its agent's start (a wait for a free
//     worker included); queue-wait-ms, MERGE_QUEUED to integrating; and
//     merge-ms, integrating to ARCHIVED, the merge queue's own time per
//     change, and queue-busy, the share of the run it is busy with a change.
//
// Figures, never a pass/fail test on time: `make bench` prints them.
func BenchmarkApply(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) { benchApply(b, bc.scaledBy(*benchScale)) })
	}
}

func benchApply(b *testing.B, bc benchCase) {
	var m benchMetrics
	for b.Loop() {
		b.StopTimer()
		f := newFixture(b)
		f.project.MaxParallel = bc.parallel()
		f.project.MergeQueue.Speculative = bc.stacked()
		f.sentinelTick = 100 * time.Millisecond // Apply's default
		f.project.Gates = map[string]config.Gate{}
		verify, integration := config.Stack{}, config.Stack{}
		for i, d := range bc.verify {
			name := fmt.Sprintf("verify-%d", i+1)
			f.project.Gates[name] = sleepGate(i+1, d)
			verify[name] = config.StackEntry{}
		}
		for i, d := range bc.integration {
			name := fmt.Sprintf("integration-%d", i+1)
			f.project.Gates[name] = sleepGate(i+1, d)
			integration[name] = config.StackEntry{}
		}
		if len(bc.verify) == 0 {
			f.project.Gates["verify"] = config.Gate{Kind: "exec", Mode: "run", Order: 1, Run: []string{"true"}}
			verify["verify"] = config.StackEntry{}
		}
		if len(bc.integration) == 0 {
			f.project.Gates["integration"] = config.Gate{Kind: "exec", Mode: "run", Order: 1, Run: []string{"true"}}
			integration["integration"] = config.StackEntry{}
		}
		f.project.Stacks = map[string]config.Stack{"feature": verify}
		f.project.Integration = integration
		for _, c := range generateDAG(bc.changes, bc.depth, bc.seed) {
			f.change(c.name, c.deps...)
		}
		trace := filepath.Join(b.TempDir(), "git-trace2.json")
		b.Setenv("GIT_TRACE2_EVENT", trace)

		cpu0 := cpuTimes()
		b.StartTimer()
		start := time.Now()
		sum, err := f.apply(context.Background(), sleepAgent{bc.agent})
		wall := time.Since(start)
		b.StopTimer()
		cpu1 := cpuTimes()
		if err != nil || sum.Result != "success" {
			b.Fatalf("run: %v %+v", err, sum)
		}
		g, err := graph.Build(f.plan, f.project)
		if err != nil {
			b.Fatal(err)
		}
		lb := lowerBound(g, bc)
		calls, err := gitProcesses(trace)
		if err != nil {
			b.Fatal(err)
		}
		m.add(bc, wall, lb, cpu1.sub(cpu0), calls, f.events())
		if *benchKeep != "" {
			for from, to := range map[string]string{
				filepath.Join(f.root, ".set", "events.jsonl"): bc.name + "-events.jsonl",
				trace: bc.name + "-git-trace2.json",
			} {
				data, err := os.ReadFile(from)
				if err == nil {
					err = os.WriteFile(filepath.Join(*benchKeep, to), data, 0o644)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StartTimer()
	}
	m.report(b, bc)
}

// sleepGate is an exec gate that takes d.
func sleepGate(order int, d time.Duration) config.Gate {
	return config.Gate{Kind: "exec", Mode: "run", Order: order,
		Run: []string{"sleep", strconv.FormatFloat(d.Seconds(), 'f', -1, 64)}}
}

// instantAgent writes one file and reports success at once.
type instantAgent struct{}

func (instantAgent) Name() string { return "instant" }
func (instantAgent) Run(_ context.Context, req agent.Request) (agent.Result, error) {
	err := os.WriteFile(filepath.Join(req.Worktree, req.Change+".txt"), []byte(req.Change+"\n"), 0o644)
	return agent.Result{Done: err == nil, Calls: []agent.CallUsage{{Tokens: usage.Tokens{Input: 10, Output: 5}}}}, err
}

// sleepAgent is a scripted agent that works for d, then writes one file
// and reports success.
type sleepAgent struct{ d time.Duration }

func (sleepAgent) Name() string { return "sleep" }
func (a sleepAgent) Run(ctx context.Context, req agent.Request) (agent.Result, error) {
	start := time.Now()
	select {
	case <-time.After(a.d):
	case <-ctx.Done():
		return agent.Result{}, ctx.Err()
	}
	err := os.WriteFile(filepath.Join(req.Worktree, req.Change+".txt"), []byte(req.Change+"\n"), 0o644)
	return agent.Result{Done: err == nil, Duration: time.Since(start),
		Calls: []agent.CallUsage{{Tokens: usage.Tokens{Input: 10, Output: 5}}}}, err
}

// dagChange is a generated change and its dependencies.
type dagChange struct {
	name string
	deps []string
}

// generateDAG makes n changes in depth levels (every level has at least
// one; the first change of each level depends on one of the level before,
// so the longest chain is exactly depth): each change of a level below
// the top depends on one change of the level before and, half the time,
// on one more of any level before. The same seed gives the same DAG.
func generateDAG(n, depth int, seed uint64) []dagChange {
	rng := rand.New(rand.NewPCG(seed, 0))
	levels := make([]int, n)
	for i := range n {
		if i < depth {
			levels[i] = i
		} else {
			levels[i] = rng.IntN(depth)
		}
	}
	slices.Sort(levels)
	byLevel := make([][]string, depth)
	out := make([]dagChange, n)
	for i, l := range levels {
		name := fmt.Sprintf("c%03d", i)
		var deps []string
		if l > 0 {
			prev := byLevel[l-1]
			deps = append(deps, prev[rng.IntN(len(prev))])
			if rng.IntN(2) == 0 {
				below := byLevel[rng.IntN(l)]
				deps = append(deps, below[rng.IntN(len(below))])
			}
			slices.Sort(deps)
			deps = slices.Compact(deps)
		}
		byLevel[l] = append(byLevel[l], name)
		out[i] = dagChange{name: name, deps: deps}
	}
	return out
}

// lowerBound is the wall time of the run with no overhead: the baseline
// (every distinct exec gate once on main, in turn), then set's policy
// simulated on the durations alone: at most maxParallel changes between
// dispatch and the merge queue, dispatched in the graph's order (critical
// path first) as soon as their dependencies are merged, each taking the
// agent's and its verify gates' time, and a first-come first-served merge
// queue taking the integration stack's time per change, for up to
// mergeQueue.speculative changes at once, each merged once it and every
// change ahead of it are done.
func lowerBound(g *graph.Graph, bc benchCase) time.Duration {
	work := bc.agent
	baseline := time.Duration(0)
	for _, d := range bc.verify {
		work += d
		baseline += d
	}
	integrate := time.Duration(0)
	for _, d := range bc.integration {
		integrate += d
		baseline += d
	}
	maxParallel, stacked := bc.parallel(), bc.stacked()
	deps := map[string][]string{}
	for _, c := range g.Changes {
		deps[c.Name] = c.DependsOn
	}
	var (
		now     time.Duration
		merged  = map[string]bool{}
		started = map[string]bool{}
		running = map[string]time.Duration{} // change → when its verify ends
		queue   []string
		train   []string                     // integrating, in queue order
		ends    = map[string]time.Duration{} // when their stacks end
	)
	for len(merged) < len(g.Order) {
		for _, name := range g.Order {
			if len(running) >= maxParallel {
				break
			}
			if started[name] || !allOf(deps[name], merged) {
				continue
			}
			started[name] = true
			running[name] = now + work
		}
		for len(train) < stacked && len(queue) > 0 {
			ends[queue[0]] = now + integrate
			train, queue = append(train, queue[0]), queue[1:]
		}
		next := time.Duration(-1)
		for _, t := range running {
			if next < 0 || t < next {
				next = t
			}
		}
		// A stack that ends now (an integration stack of no duration)
		// merges now: time does not move for it. (The train's first
		// attempt ends first, so it is the one that merges.)
		for _, name := range train {
			if t := ends[name]; t >= now && (next < 0 || t < next) {
				next = t
			}
		}
		if next < 0 {
			panic("lowerBound: nothing runs and nothing is merged")
		}
		now = next
		for len(train) > 0 && ends[train[0]] <= now {
			merged[train[0]] = true
			train = train[1:]
		}
		// Changes verified at the same moment queue in the graph's order.
		for _, name := range g.Order {
			if t, ok := running[name]; ok && t == now {
				delete(running, name)
				queue = append(queue, name)
			}
		}
	}
	return baseline + now
}

func allOf(names []string, set map[string]bool) bool {
	for _, n := range names {
		if !set[n] {
			return false
		}
	}
	return true
}

// cpu is the CPU time of this process and of its waited-for children.
type cpu struct{ self, children time.Duration }

func cpuTimes() cpu {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	t := func(ru syscall.Rusage) time.Duration {
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return cpu{self: t(self), children: t(children)}
}

func (c cpu) sub(d cpu) cpu { return cpu{self: c.self - d.self, children: c.children - d.children} }

// peakRSS is the peak resident memory of this process, in MB.
func peakRSS() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	kb := float64(ru.Maxrss)
	if runtime.GOOS == "darwin" { // bytes there
		kb /= 1024
	}
	return kb / 1024
}

// gitCalls counts the git processes of a trace2 event file: all of them,
// those set started itself (not git's own children), and those by
// subcommand.
type gitCalls struct {
	all, top int
	bySub    map[string]int
}

// gitProcesses reads the GIT_TRACE2_EVENT file at path.
func gitProcesses(path string) (gitCalls, error) {
	calls := gitCalls{bySub: map[string]int{}}
	f, err := os.Open(path)
	if err != nil {
		return calls, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e struct {
			Event string   `json:"event"`
			SID   string   `json:"sid"`
			Argv  []string `json:"argv"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Event != "start" {
			continue
		}
		calls.all++
		if strings.Contains(e.SID, "/") {
			continue // started by another git
		}
		calls.top++
		calls.bySub[subcommand(e.Argv)]++
	}
	return calls, sc.Err()
}

// subcommand is git's subcommand in argv, with its first argument for
// the plumbing commands whose argument says what they do.
func subcommand(argv []string) string {
	for i := 1; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "-C" || a == "-c":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			if (a == "worktree" || a == "config") && i+1 < len(argv) {
				return a + " " + argv[i+1]
			}
			return a
		}
	}
	return "?"
}

// benchMetrics sums the runs of one case.
type benchMetrics struct {
	runs                               int
	wall, lb                           time.Duration
	cpu                                cpu
	git                                gitCalls
	pipeline, agentToGate, gateToQueue []float64
	handoff, queueWait, merge          []float64
	queueBusy                          float64 // of the walls, summed
}

func (m *benchMetrics) add(bc benchCase, wall, lb time.Duration, c cpu, calls gitCalls, events []journal.Event) {
	m.runs++
	m.wall += wall
	m.lb += lb
	m.cpu.self += c.self
	m.cpu.children += c.children
	m.git.all += calls.all
	m.git.top += calls.top
	if m.git.bySub == nil {
		m.git.bySub = map[string]int{}
	}
	for k, v := range calls.bySub {
		m.git.bySub[k] += v
	}
	a, g := reactionLatencies(events)
	m.agentToGate = append(m.agentToGate, a...)
	m.gateToQueue = append(m.gateToQueue, g...)
	m.pipeline = append(m.pipeline, pipelineLatencies(events)...)
	st := stageLatencies(events)
	m.handoff = append(m.handoff, st.handoff...)
	m.queueWait = append(m.queueWait, st.queueWait...)
	m.merge = append(m.merge, st.merge...)
	m.queueBusy += st.busy.Seconds() / wall.Seconds()
}

func (m *benchMetrics) report(b *testing.B, bc benchCase) {
	if m.runs == 0 {
		return
	}
	runs := float64(m.runs)
	changes := runs * float64(bc.changes)
	b.ReportMetric(m.wall.Seconds()/runs, "wall-s")
	b.ReportMetric(m.lb.Seconds()/runs, "lower-bound-s")
	b.ReportMetric(m.wall.Seconds()/m.lb.Seconds(), "wall/lower-bound")
	b.ReportMetric(ms(m.wall-m.lb)/changes, "excess-ms/change")
	b.ReportMetric(ms(m.cpu.self)/changes, "cpu-ms/change")
	b.ReportMetric(ms(m.cpu.children)/changes, "child-cpu-ms/change")
	b.ReportMetric(float64(m.git.all)/changes, "git/change")
	b.ReportMetric(float64(m.git.top)/changes, "git-top/change")
	b.ReportMetric(peakRSS(), "peak-rss-MB")
	b.ReportMetric(mean(m.pipeline), "pipeline-ms/change")
	b.ReportMetric(mean(m.agentToGate), "agent→gate-ms")
	b.ReportMetric(mean(m.gateToQueue), "gate→queue-ms")
	b.ReportMetric(mean(m.handoff), "handoff-ms")
	b.ReportMetric(mean(m.queueWait), "queue-wait-ms")
	b.ReportMetric(mean(m.merge), "merge-ms")
	b.ReportMetric(m.queueBusy/runs, "queue-busy")
	subs := slices.SortedFunc(func(yield func(string) bool) {
		for k := range m.git.bySub {
			if !yield(k) {
				return
			}
		}
	}, func(x, y string) int { return m.git.bySub[y] - m.git.bySub[x] })
	var parts []string
	for _, s := range subs {
		parts = append(parts, fmt.Sprintf("%s %.2f", s, float64(m.git.bySub[s])/changes))
	}
	b.Logf("git processes set started, per change: %s", strings.Join(parts, ", "))
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

// stages are the waits of stageLatencies.
type stages struct {
	handoff, queueWait, merge []float64
	// busy sums the merge queue's time with a change (merge).
	busy time.Duration
}

// stageLatencies measures, per change: from the ARCHIVED of the last of
// its dependencies to its first AGENT_SESSION_DECISION (handoff; changes
// with dependencies only), from each MERGE_QUEUED to its change becoming
// integrating (queueWait), and from then to its ARCHIVED (merge).
func stageLatencies(events []journal.Event) stages {
	var st stages
	archived := map[string]time.Time{}
	deps := map[string][]string{}
	started := map[string]bool{}
	queued := map[string]time.Time{}
	integrating := map[string]time.Time{}
	for _, e := range events {
		switch e.Type {
		case journal.PlanCreated:
			d, _ := journal.Decode[journal.PlanCreatedData](e)
			p, err := plan.Decode(d.Plan)
			if err != nil {
				break
			}
			for _, c := range p.Changes {
				deps[c.Name] = c.DependsOn
			}
		case journal.AgentSessionDecision:
			if started[e.Change] || len(deps[e.Change]) == 0 {
				break
			}
			started[e.Change] = true
			var last time.Time
			for _, d := range deps[e.Change] {
				if t := archived[d]; t.After(last) {
					last = t
				}
			}
			st.handoff = append(st.handoff, ms(e.Time.Sub(last)))
		case journal.MergeQueued:
			queued[e.Change] = e.Time
		case journal.StateChange:
			d, _ := journal.Decode[journal.StateChangeData](e)
			if d.To == "integrating" {
				integrating[e.Change] = e.Time
				if t, ok := queued[e.Change]; ok {
					st.queueWait = append(st.queueWait, ms(e.Time.Sub(t)))
					delete(queued, e.Change)
				}
			}
		case journal.Archived:
			archived[e.Change] = e.Time
			if t, ok := integrating[e.Change]; ok {
				st.merge = append(st.merge, ms(e.Time.Sub(t)))
				st.busy += e.Time.Sub(t)
			}
		}
	}
	return st
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

// TestLowerBound pins the simulation on cases small enough to work out
// by hand, and checks that it ends on every scenario of BenchmarkApply.
func TestLowerBound(t *testing.T) {
	graphOf := func(t *testing.T, changes []dagChange) *graph.Graph {
		f := fixtureAt(t, t.TempDir())
		for _, c := range changes {
			f.change(c.name, c.deps...)
		}
		g, err := graph.Build(f.plan, f.project)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	s := time.Second
	chain := []dagChange{{name: "a"}, {name: "b", deps: []string{"a"}}}
	pair := []dagChange{{name: "a"}, {name: "b"}}
	for _, tc := range []struct {
		name    string
		changes []dagChange
		bc      benchCase
		want    time.Duration
	}{
		// An integration stack of no duration merges at once: b starts
		// as a's agent ends.
		{"chain, instant merges", chain, benchCase{agent: s}, 2 * s},
		// The baseline runs the verify gate once (1 s) before anything.
		{"chain, a verify gate", chain, benchCase{agent: s, verify: []time.Duration{s}}, s + 4*s},
		// Both verified at 1 s; a integrates 1–3 s, b 3–5 s; the
		// baseline runs the integration gate once (2 s).
		{"pair, serial queue", pair, benchCase{agent: s, integration: []time.Duration{2 * s}}, 2*s + 5*s},
		// Stacked, both integrate 1–3 s.
		{"pair, two stacked", pair, benchCase{agent: s, integration: []time.Duration{2 * s}, speculative: 2}, 2*s + 3*s},
		// One at a time: a 0–1 s, b 1–2 s, each merged as it ends.
		{"pair, one at a time", pair, benchCase{agent: s, maxParallel: 1}, 2 * s},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lowerBound(graphOf(t, tc.changes), tc.bc); got != tc.want {
				t.Errorf("lowerBound = %v, want %v", got, tc.want)
			}
		})
	}
	for _, bc := range benchCases {
		t.Run(bc.name, func(t *testing.T) {
			g := graphOf(t, generateDAG(bc.changes, bc.depth, bc.seed))
			// At least the longest chain of agents and verify stacks, one
			// after the other.
			chainWork := time.Duration(bc.depth) * bc.agent
			for _, d := range bc.verify {
				chainWork += time.Duration(bc.depth) * d
			}
			if got := lowerBound(g, bc); got < chainWork {
				t.Errorf("lowerBound = %v, less than the longest chain's %v", got, chainWork)
			}
		})
	}
}
