// Package decode turns the CUE value of a project that engine/load
// produced into its plain Go form, config.Project, and checks what the
// schema cannot express. It and engine/load are the CLI's front: the
// stages that run a plan take a config.Project and link no CUE.
package decode

import (
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"

	"github.com/set-engine/set/engine/cond"
	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/judge"
	"github.com/set-engine/set/engine/load"
	"github.com/set-engine/set/engine/pathglob"
	"github.com/set-engine/set/engine/plan/prompt"
)

// Load loads the project in dir and decodes it. Errors carry CUE paths and
// positions; print them with load.Details.
func Load(dir string, opts load.Options) (*config.Project, string, error) {
	lp, err := load.Load(dir, opts)
	if err != nil {
		root, _ := filepath.Abs(dir)
		return nil, root, err
	}
	p, err := Project(lp)
	return p, lp.Root, err
}

// Project turns a validated, concrete project value into a Project and
// checks what the schema cannot express: stacks name known gates, `when`
// conditions (of gates and sentinel rules) compile against their
// environment, every sentinel rule has exactly one of action and ladder,
// forbidden patterns and gates' failures patterns are valid regular
// expressions, model-graded gates' prompts are templates that execute.
// All problems are reported together.
func Project(lp *load.Instance) (*config.Project, error) {
	var p config.Project
	if err := lp.Value.Decode(&p); err != nil {
		return nil, err
	}
	d := decoder{lp: lp, p: &p, positions: map[string]config.Pos{}, declared: map[string]bool{}}
	d.checkStacks()
	d.checkConditions()
	d.checkSentinel()
	d.checkForbidden()
	d.checkInlineTests()
	d.checkFailures()
	d.checkGatePrompts()
	d.checkRunners()
	d.checkDaggerHosts()
	d.checkPermissions()
	d.checkPrompts()
	d.checkFallbacks()
	d.checkReplan()
	d.checkSpec()
	d.checkPathGlobs()
	d.checkLearnings()
	d.recordPositions()
	if d.errs != nil {
		return nil, d.errs
	}
	p.Positions = config.Positions{Root: lp.Root, At: d.positions, Declared: d.declared}
	return &p, nil
}

type decoder struct {
	lp        *load.Instance
	p         *config.Project
	errs      errors.Error
	positions map[string]config.Pos
	declared  map[string]bool
}

// pos is where the path below `project` is declared: in the project's own
// files when they declare it, otherwise wherever the value came from (an
// imported profile, the schema).
func (d *decoder) pos(sels ...string) token.Pos {
	if pos := d.lp.FieldPos(sels...); pos.IsValid() {
		return pos
	}
	path := make([]cue.Selector, len(sels))
	for i, s := range sels {
		path[i] = cue.Str(s)
	}
	return d.lp.Value.LookupPath(cue.MakePath(path...)).Pos()
}

// givenPos is where a level gave the value of the path below `project`:
// the project's own files when they declare it, otherwise the first of
// the value's conjuncts outside set's schema (a profile's, which CUE's
// own position of the value passes over for the schema's declaration);
// pos when there is none.
func (d *decoder) givenPos(sels ...string) token.Pos {
	if pos := d.lp.FieldPos(sels...); pos.IsValid() {
		return pos
	}
	path := make([]cue.Selector, len(sels))
	for i, s := range sels {
		path[i] = cue.Str(s)
	}
	if op, conjuncts := d.lp.Value.LookupPath(cue.MakePath(path...)).Expr(); op == cue.AndOp {
		for _, c := range conjuncts {
			if pos := c.Pos(); pos.IsValid() && !load.InSchema(pos) {
				return pos
			}
		}
	}
	return d.pos(sels...)
}

// fail records an error at the value of the given path, naming the path as
// `cue vet` does.
func (d *decoder) fail(sels []string, format string, args ...any) {
	d.failAt(d.pos(sels...), sels, format, args...)
}

// failGiven records an error in the value a level gave the given path
// (givenPos): a pattern or a glob that a profile may have written. The
// path is named as CUE names it: a label that is not an identifier
// quoted (project.forbidden."no-sleep".paths), as the schema's errors
// name it.
func (d *decoder) failGiven(sels []string, format string, args ...any) {
	path := []string{load.ProjectField}
	for _, s := range sels {
		path = append(path, cue.Str(s).String())
	}
	d.errs = errors.Append(d.errs, load.NewFieldError(path, d.givenPos(sels...), format, args...))
}

func (d *decoder) failAt(pos token.Pos, sels []string, format string, args ...any) {
	path := append([]string{load.ProjectField}, sels...)
	d.errs = errors.Append(d.errs, load.NewFieldError(path, pos, format, args...))
}

func (d *decoder) checkStacks() {
	check := func(stack config.Stack, sels ...string) {
		for _, name := range slices.Sorted(maps.Keys(stack)) {
			if _, ok := d.p.Gates[name]; !ok {
				d.fail(append(sels, name), "unknown gate %q (known: %s)", name, strings.Join(slices.Sorted(maps.Keys(d.p.Gates)), ", "))
			}
		}
	}
	for _, t := range slices.Sorted(maps.Keys(d.p.Stacks)) {
		check(d.p.Stacks[t], "stacks", t)
	}
	check(d.p.Integration, "integration")
}

func (d *decoder) checkConditions() {
	for _, name := range slices.Sorted(maps.Keys(d.p.Gates)) {
		if src := d.p.Gates[name].When; src != "" {
			if _, err := cond.CompileGate(src); err != nil {
				d.fail([]string{"gates", name, "when"}, "%v", conditionMessage(err))
			}
		}
	}
	rules := d.p.Sentinel.Rules
	for _, name := range slices.Sorted(maps.Keys(rules)) {
		if _, err := cond.CompileSentinel(rules[name].When); err != nil {
			d.fail([]string{"sentinel", "rules", name, "when"}, "%v", conditionMessage(err))
		}
	}
}

// checkSentinel checks that every sentinel rule sets exactly one of
// action and ladder. When only one of the two is the project's own, the
// error is on that one and says where the other comes from.
func (d *decoder) checkSentinel() {
	rules := d.p.Sentinel.Rules
	for _, name := range slices.Sorted(maps.Keys(rules)) {
		r := rules[name]
		path := []string{"sentinel", "rules", name}
		declares := func(field string) bool { return d.lp.FieldPos(append(path, field)...).IsValid() }
		switch {
		case r.Action == "" && len(r.Ladder) == 0:
			d.fail(path, "the rule has neither an action nor a ladder; set one, e.g. action: \"warn\" or ladder: [\"warn\", \"restart\", \"fail\"]")
		case r.Action == "" || len(r.Ladder) == 0:
		case declares("action") && !declares("ladder"):
			d.fail(append(path, "action"), "the rule already has the ladder [%s] from its profile, and a rule takes an action or a ladder, not both; set ladder: [%q] instead", strings.Join(r.Ladder, ", "), r.Action)
		case declares("ladder") && !declares("action"):
			d.fail(append(path, "ladder"), "the rule already has action: %q from its profile, and a rule takes an action or a ladder, not both; set action instead", r.Action)
		default:
			d.fail(append(path, "ladder"), "a rule takes an action or a ladder, not both (an action is a ladder of one step: ladder: [%q])", r.Action)
		}
	}
}

// conditionMessage is the condition's error as engine/cond words it (the
// unknown name and the names that exist, line:column in the expression),
// with expr's source snippet indented below it.
func conditionMessage(err error) string {
	if ce, ok := err.(*cond.Error); ok {
		return strings.ReplaceAll(ce.Err.Error(), "\n", "\n\t")
	}
	return err.Error()
}

// checkForbidden checks each forbidden pattern as the rules gate uses
// it, as it checks a rule learning's (checkRule).
func (d *decoder) checkForbidden() {
	for _, name := range slices.Sorted(maps.Keys(d.p.Forbidden)) {
		f := d.p.Forbidden[name]
		d.checkRule([]string{"forbidden", name}, f.Pattern, f.Paths)
	}
}

// checkInlineTests checks that every inlineTests entry's files is a glob
// pathglob can use and its from a valid regular expression.
func (d *decoder) checkInlineTests() {
	for _, name := range slices.Sorted(maps.Keys(d.p.InlineTests)) {
		r := d.p.InlineTests[name]
		if r.Files == "" {
			continue
		}
		if err := pathglob.Check(r.Files); err != nil {
			d.fail([]string{"inlineTests", name, "files"}, "%v", err)
		}
		if _, err := regexp.Compile(r.From); err != nil {
			d.fail([]string{"inlineTests", name, "from"}, "invalid regular expression: %v", err)
		}
	}
}

// checkFailures checks that every gate's failures pattern compiles.
func (d *decoder) checkFailures() {
	for _, name := range slices.Sorted(maps.Keys(d.p.Gates)) {
		if src := d.p.Gates[name].Failures; src != "" {
			if _, err := regexp.Compile(src); err != nil {
				d.fail([]string{"gates", name, "failures"}, "invalid regular expression: %v", err)
			}
		}
	}
}

// checkGatePrompts checks that the prompt of every model-graded gate is
// a template that executes on the data the gate gives it (judge.Check).
func (d *decoder) checkGatePrompts() {
	for _, name := range slices.Sorted(maps.Keys(d.p.Gates)) {
		if g := d.p.Gates[name]; g.Graded() {
			if _, err := judge.Check(g.Prompt); err != nil {
				d.fail([]string{"gates", name, "prompt"}, "%v", err)
			}
		}
	}
}

// checkFallbacks refuses a fallback "TRANSPORT:MODEL" whose transport is
// not one of the schema's (a model id never holds a colon).
func (d *decoder) checkFallbacks() {
	for _, role := range slices.Sorted(maps.Keys(d.p.Agent.Fallbacks)) {
		for i, f := range d.p.Agent.Fallbacks[role] {
			transport, model, ok := strings.Cut(f, ":")
			switch {
			case !ok:
				continue
			case !slices.Contains(config.Transports, transport):
				d.fail([]string{"agent", "fallbacks", role}, "entry %d: unknown transport %q in %q (want %s, then a colon and the model)", i, transport, f, strings.Join(config.Transports, ", "))
			case model == "":
				d.fail([]string{"agent", "fallbacks", role}, "entry %d: %q names no model after the transport", i, f)
			}
		}
	}
}

// checkReplan refuses planner.replan: "auto" where there is no model
// planner to ask: under the static strategy, or with an explicit plan.
func (d *decoder) checkReplan() {
	if d.p.Planner.Replan != "auto" {
		return
	}
	switch {
	case d.p.Plan != nil:
		d.fail([]string{"planner", "replan"}, "replan needs a planner strategy that calls a model, and this project's plan is written in set.cue (project.plan)")
	case d.p.Planner.Strategy == config.StrategyStatic:
		d.fail([]string{"planner", "replan"}, "replan needs a planner strategy that calls a model (single, three-phase or auto), not %q", config.StrategyStatic)
	case d.p.Planner.FromFolders():
		d.fail([]string{"planner", "replan"}, "replan asks a model to plan the requirements no change covers, and the %q strategy plans only the change folders under openspec/changes/, which no model may add to; remove replan, or write the missing change folder", config.StrategyOpenSpec)
	}
}

// checkSpec holds the spec list to the planner strategy: a markdown
// strategy plans from at least one spec file; the openspec strategy plans
// from the change folders under openspec/changes/ only, so a spec beside
// it is refused (the mixed-project rule: a project plans from one source,
// never both), saying how to choose.
func (d *decoder) checkSpec() {
	switch {
	case d.p.Planner.FromFolders() && len(d.p.Spec) > 0:
		d.fail([]string{"spec"}, "planner.strategy %q plans from the change folders under openspec/changes/ only, never from a markdown spec; remove spec, or choose a markdown planner strategy and archive the change folders first (setctl archive NAME)", config.StrategyOpenSpec)
	case !d.p.Planner.FromFolders() && len(d.p.Spec) == 0:
		at := d.pos() // the project, when set.cue leaves spec out
		if pos := d.lp.FieldPos("spec"); pos.IsValid() {
			at = pos
		}
		d.failAt(at, []string{"spec"}, "list at least one spec file, or choose planner.strategy: %q to plan from openspec/changes/", config.StrategyOpenSpec)
	}
}

// checkPermissions refuses agent.permissions set for agents that have no
// permission mode: the project's agent is exec or replay and no change of
// the plan picks claude or codex.
func (d *decoder) checkPermissions() {
	has := func(adapter string) bool { return adapter == "claude" || adapter == "codex" }
	if has(d.p.Agent.Adapter) || !d.lp.FieldPos("agent", "permissions").IsValid() {
		return
	}
	if d.p.Plan != nil {
		for _, c := range d.p.Plan.Changes {
			if has(c.Agent) {
				return
			}
		}
	}
	d.fail([]string{"agent", "permissions"}, "an %s agent has no permission mode: only claude and codex agents have one", d.p.Agent.Adapter)
}

// checkPrompts checks that the model planner's prompt templates are set
// when the strategy asks a model, and that, when set, they parse and
// execute on sample data (prompt.Parse), each error at its field.
func (d *decoder) checkPrompts() {
	if d.p.Planner.Prompts == (config.PlannerPrompts{}) {
		if d.p.Planner.NeedsModel() {
			d.fail([]string{"planner", "strategy"}, "the %s strategy asks a model, with the prompts of planner.prompts, which the profile does not set; set them, e.g. planner: prompts: stdlib.prompts.planner (import \"github.com/set-engine/set/stdlib\")", d.p.Planner.Strategy)
		}
		return
	}
	_, errs := prompt.Parse(d.p.Planner.Prompts)
	for _, e := range errs {
		d.fail([]string{"planner", "prompts", e.Name}, "invalid template: %v", e.Err)
	}
}

// checkRunners checks that every runner a gate or a regeneration uses is
// configured: the dagger runner needs exactly one base.
func (d *decoder) checkRunners() {
	var users []string
	uses := func(runner string) bool {
		if runner == "" {
			runner = d.p.Runner.Kind
		}
		return runner == config.RunnerDagger
	}
	for _, name := range slices.Sorted(maps.Keys(d.p.Gates)) {
		if g := d.p.Gates[name]; g.Kind == config.KindExec && uses(g.Runner) {
			users = append(users, "gate "+name)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(d.p.Generated)) {
		if uses(d.p.Generated[path].Runner) {
			users = append(users, "the regeneration of "+path)
		}
	}
	if len(users) == 0 {
		return
	}
	dg := d.p.Runner.Dagger
	if dg == nil {
		d.fail([]string{"runner"}, "%s run on dagger, but runner.dagger is not configured (want e.g. runner: dagger: from: \"golang:1.26\")", strings.Join(users, ", "))
		return
	}
	var bases []string
	for _, b := range []struct{ name, value string }{{"from", dg.From}, {"rootfs", dg.Rootfs}, {"tarball", dg.Tarball}} {
		if b.value != "" {
			bases = append(bases, b.name)
		}
	}
	switch len(bases) {
	case 0:
		d.fail([]string{"runner", "dagger"}, "the dagger runner needs a base: set one of from, rootfs or tarball")
	case 1:
	default:
		d.fail([]string{"runner", "dagger", bases[1]}, "the dagger runner takes one base, but %s are all set", strings.Join(bases, " and "))
	}
}

// checkDaggerHosts checks that every engine of runner.dagger.hosts is a
// runner-host URL the dagger CLI can reach, whether or not a gate runs
// on dagger.
func (d *decoder) checkDaggerHosts() {
	dg := d.p.Runner.Dagger
	if dg == nil {
		return
	}
	for _, host := range dg.HostURLs() {
		if msg := hostProblem(host); msg != "" {
			// The URL is a label: named as CUE writes it, quoted.
			at := []string{"runner", "dagger", "hosts", host}
			path := []string{load.ProjectField, "runner", "dagger", "hosts", cue.Str(host).String()}
			d.errs = errors.Append(d.errs, load.NewFieldError(path, d.pos(at...), "%s", msg))
		}
	}
}

// hostSchemes are the runner-host URL schemes the dagger CLI reaches an
// engine by (_EXPERIMENTAL_DAGGER_RUNNER_HOST).
var hostSchemes = []string{"tcp", "unix", "kube-pod", "docker-container", "docker-image", "podman-container", "podman-image"}

// hostProblem says what is wrong with a key of runner.dagger.hosts, "" if
// nothing: it must be a runner-host URL of a known scheme that names
// where the engine is.
func hostProblem(host string) string {
	want := "want a runner-host URL: tcp://host:port, unix:///path, kube-pod://pod?namespace=ns, docker-container://name"
	u, err := url.Parse(host)
	if err != nil || u.Scheme == "" {
		return fmt.Sprintf("%q is not a URL; %s", host, want)
	}
	if !slices.Contains(hostSchemes, u.Scheme) {
		return fmt.Sprintf("%q has the scheme %q, which the dagger CLI does not know (%s); %s", host, u.Scheme, strings.Join(hostSchemes, ", "), want)
	}
	if u.Host == "" && (u.Scheme != "unix" || u.Path == "") {
		return fmt.Sprintf("%q names no engine; %s", host, want)
	}
	return ""
}

// recordPositions keeps the positions of the fields later stages report
// errors on: the spec list, the main branch, every gate and stack entry,
// every dagger mount's source (setctl doctor checks it exists), and an
// explicit plan's changes. The main branch is where the project's
// files set it or, when they do not (the profile's or the schema's default
// applies), set.cue's project.
func (d *decoder) recordPositions() {
	record := func(sels ...string) {
		key := strings.Join(sels, ".")
		if pos := d.lp.FieldPos(sels...); pos.IsValid() {
			d.positions[key], d.declared[key] = load.Position(pos), true
		} else if pos := d.pos(sels...); pos.IsValid() {
			d.positions[key] = load.Position(pos)
		}
	}
	record("spec")
	record("delivery", "remote")
	if pos := d.lp.FieldPos("mainBranch"); pos.IsValid() {
		d.positions["mainBranch"] = load.Position(pos)
	} else if pos := d.lp.ConfigPos(); pos.IsValid() {
		d.positions["mainBranch"] = load.Position(pos)
	}
	for name := range d.p.Gates {
		record("gates", name)
	}
	for t := range d.p.Stacks {
		for name := range d.p.Stacks[t] {
			record("stacks", t, name)
		}
	}
	for name := range d.p.Integration {
		record("integration", name)
	}
	for _, role := range []string{"implement", "plan", "review", "verify"} {
		record("agent", "models", role)
	}
	record("agent", "transport")
	if d.p.Runner.Dagger != nil {
		for path := range d.p.Runner.Dagger.Mounts {
			record("runner", "dagger", "mounts", path, "source")
		}
	}
	for role := range d.p.Agent.Fallbacks {
		record("agent", "fallbacks", role)
	}
	if d.p.Plan == nil {
		return
	}
	for name := range d.p.Plan.Changes {
		record("plan", "changes", name)
		record("plan", "changes", name, "dependsOn")
		record("plan", "changes", name, "requirements")
		record("plan", "changes", name, "model")
	}
}
