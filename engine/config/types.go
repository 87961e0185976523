// Package config holds the plain Go form of a project's set.cue, which
// engine/config/decode decodes from the CUE value that engine/load
// produced. It imports no CUE package, so the stages that run a plan
// (gate, agent, merge, orchestrator) do not link CUE (a test proves it).
// The field set mirrors schema/ one to one: every field the schema allows
// has a home here, and engine code outside the decoder reads every one
// (two tests prove it), so the schema offers nothing the engine ignores.
package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Project is the decoded `project` of set.cue: the project's
// configuration, named after the CUE field and definition
// (schema.#Project) it decodes. The other Projects are other things: a
// load.Instance is the CUE value it is decoded from, a project.Project is
// a loaded project (this configuration and its spec), a dashboard.Project
// a project the dashboard shows.
type Project struct {
	Name         string               `json:"name"`
	Profile      string               `json:"profile"`
	Conventions  map[string]string    `json:"conventions"`
	TestPatterns map[string]string    `json:"testPatterns"`
	InlineTests  map[string]Inline    `json:"inlineTests"`
	TestRunners  map[string]bool      `json:"testRunners"`
	Generated    map[string]Generated `json:"generated"`
	MergeUnion   map[string]bool      `json:"mergeUnion"`
	CrossCutting map[string]bool      `json:"crossCutting"`
	Forbidden    map[string]Forbidden `json:"forbidden"`
	Learnings    map[string]Learning  `json:"learnings"`
	Gates        map[string]Gate      `json:"gates"`
	Stacks       map[string]Stack     `json:"stacks"`
	Integration  Stack                `json:"integration"`
	PassEnv      map[string]bool      `json:"passEnv"`
	Spec         []string             `json:"spec"`
	Strict       bool                 `json:"strict"`
	MainBranch   string               `json:"mainBranch"`
	MaxParallel  int                  `json:"maxParallel"`
	MergeQueue   MergeQueue           `json:"mergeQueue"`
	Delivery     Delivery             `json:"delivery"`
	Secrets      map[string]bool      `json:"secrets"`
	History      History              `json:"history"`
	Learn        Learn                `json:"learn"`
	Budgets      Budgets              `json:"budgets"`
	Sentinel     Sentinel             `json:"sentinel"`
	Planner      Planner              `json:"planner"`
	Agent        Agent                `json:"agent"`
	Runner       Runner               `json:"runner"`
	Plan         *Plan                `json:"plan,omitempty"`

	// Positions is where the fields later stages report errors on are
	// declared; the decoder records them.
	Positions Positions `json:"-"`
}

// History is how many runs the run directory keeps (schema #History).
type History struct {
	// Keep is the number of newest runs a new run keeps (the others are
	// pruned before it starts); 0 keeps every run.
	Keep int `json:"keep,omitempty"`
}

// Learning is one thing earlier runs taught, as a person adopted it
// (schema #Learning). Which fields count depends on Kind.
type Learning struct {
	// Kind is LearningConvention, LearningPlanning or LearningRule.
	Kind string `json:"kind"`
	// Text is the sentence agents or the planner are given, a rule's
	// message.
	Text string `json:"text"`
	// Enabled false turns off a learning a profile gives.
	Enabled bool `json:"enabled"`
	// Signature is the failure the learning answers (learn.Signature's
	// form); "" when it names none.
	Signature string `json:"signature,omitempty"`
	// Types and Paths limit a convention to changes of those types and
	// whose scope may touch those globs; Paths limits a rule to the
	// files it matches. Empty: no limit.
	Types []string `json:"types,omitempty"`
	Paths []string `json:"paths,omitempty"`
	// Serialise is a planning learning's globs of files that keep apart
	// the changes whose scopes may touch them.
	Serialise []string `json:"serialise,omitempty"`
	// Pattern is a rule's RE2 expression, matched against added lines.
	Pattern string `json:"pattern,omitempty"`
}

// The kinds of learnings.
const (
	LearningConvention = "convention"
	LearningPlanning   = "planning"
	LearningRule       = "rule"
)

// NamedLearning is a learning with its key in set.cue.
type NamedLearning struct {
	Name string
	Learning
}

// Learn is how setctl learn reads the kept runs (schema #Learn).
type Learn struct {
	// Threshold is how many changes, or runs, a failure must have been
	// seen in before it is proposed as a learning.
	Threshold int `json:"threshold"`
	// ExpireAfter is how many runs since its adoption a learning's
	// failure may not recur before its removal is proposed.
	ExpireAfter int `json:"expireAfter"`
}

// MergeQueue is how verified changes reach main: its configuration
// (orchestrator.mergeQueue is the queue it configures).
type MergeQueue struct {
	// Speculative is how many queued changes the queue integrates at once,
	// each merged onto the candidates of the ones ahead of it (1: one at a
	// time).
	Speculative int `json:"speculative"`
}

// Delivery is where the merge queue lands a change (schema #Delivery).
type Delivery struct {
	// Mode is DeliveryLocal, DeliveryPush or DeliveryPullRequest.
	Mode string `json:"mode"`
	// Remote names the git remote of push and pull-request modes.
	Remote string `json:"remote"`
	// Forge is the forge of pull-request mode (nil in the others).
	Forge *Forge `json:"forge,omitempty"`
}

// Forge is the forge of pull-request delivery (schema #Forge).
type Forge struct {
	// Kind is "github".
	Kind string `json:"kind"`
	// Repository is owner/name, or empty to read it from the remote's URL.
	Repository string `json:"repository"`
	// APIURL is the REST API's base URL.
	APIURL string `json:"apiURL"`
	// TokenEnv names the environment variable holding the API token.
	TokenEnv string `json:"tokenEnv"`
	// AutoMerge hands each pull request to the forge's merge queue or
	// auto-merge once it is opened.
	AutoMerge bool `json:"autoMerge"`
	// MergeMethod is auto-merge's method: "squash", "merge" or "rebase".
	MergeMethod string `json:"mergeMethod"`
	// Wait is how long apply watches open pull requests once it has
	// nothing else to do.
	Wait Duration `json:"wait"`
}

// The delivery modes.
const (
	// DeliveryLocal moves the local main only.
	DeliveryLocal = "local"
	// DeliveryPush lands each change on Remote's main by a push that is
	// never forced; the local main follows.
	DeliveryPush = "push"
	// DeliveryPullRequest pushes each tested candidate as a branch and
	// opens a pull request for it; the forge merges.
	DeliveryPullRequest = "pull-request"
)

// ProposesPullRequests reports whether changes reach the remote's main
// through pull requests the forge merges.
func (d Delivery) ProposesPullRequests() bool { return d.Mode == DeliveryPullRequest }

// Pushes reports whether changes land on the remote's main.
func (d Delivery) Pushes() bool { return d.Mode == DeliveryPush }

// FollowsRemote reports whether the remote's main is the main, which the
// local main follows: in push and pull-request modes.
func (d Delivery) FollowsRemote() bool { return d.Pushes() || d.ProposesPullRequests() }

// Passed is the names passEnv lets through to gates, sorted: those whose
// entry is true.
func (p *Project) Passed() []string { return enabled(p.PassEnv) }

// SecretNames are the variables secrets names, sorted: those whose entry
// is true, and in pull-request mode the forge's token variable
// (delivery.forge.tokenEnv), whose value set never writes anywhere.
func (p *Project) SecretNames() []string {
	names := enabled(p.Secrets)
	if f := p.Delivery.Forge; p.Delivery.ProposesPullRequests() && f != nil && f.TokenEnv != "" && !slices.Contains(names, f.TokenEnv) {
		names = append(names, f.TokenEnv)
		slices.Sort(names)
	}
	return names
}

// Named is every learning the project names, enabled or not, ordered by
// name: one a person turned off is not proposed again.
func (p *Project) Named() []NamedLearning {
	var out []NamedLearning
	for _, name := range slices.Sorted(maps.Keys(p.Learnings)) {
		out = append(out, NamedLearning{Name: name, Learning: p.Learnings[name]})
	}
	return out
}

// Adopted is the enabled learnings of kind (every kind when kind is
// ""), ordered by name: what this project enforces.
func (p *Project) Adopted(kind string) []NamedLearning {
	return slices.DeleteFunc(p.Named(), func(l NamedLearning) bool {
		return !l.Enabled || kind != "" && l.Kind != kind
	})
}

// ConventionList is the conventions handed to agents: the texts that are
// not empty, ordered by their names.
func (p *Project) ConventionList() []string { return nonEmpty(p.Conventions) }

// TestGlobs is the globs of files that count as tests: the test patterns
// that are not empty, ordered by their names, each once.
func (p *Project) TestGlobs() []string {
	return slices.Compact(slices.Sorted(slices.Values(nonEmpty(p.TestPatterns))))
}

// InlineTestRules is the inlineTests that count, ordered by their names:
// those whose files glob is not empty.
func (p *Project) InlineTestRules() []Inline {
	var rules []Inline
	for _, name := range slices.Sorted(maps.Keys(p.InlineTests)) {
		if r := p.InlineTests[name]; r.Files != "" {
			rules = append(rules, r)
		}
	}
	return rules
}

// TestRunnerList is the test runners whose configuration names more
// test files (engine/testconfig), sorted: those whose testRunners entry
// is true.
func (p *Project) TestRunnerList() []string { return enabled(p.TestRunners) }

// UnionGlobs are the globs of the append-only files whose merge
// conflicts set resolves as a union, sorted: those whose mergeUnion entry
// is true.
func (p *Project) UnionGlobs() []string { return enabled(p.MergeUnion) }

// CrossCuttingGlobs are the globs of the files that serialise the
// changes whose scopes may touch them, sorted, each once: those whose
// crossCutting entry is true and the serialise globs of the adopted
// planning learnings.
func (p *Project) CrossCuttingGlobs() []string {
	globs := enabled(p.CrossCutting)
	for _, l := range p.Adopted(LearningPlanning) {
		globs = append(globs, l.Serialise...)
	}
	slices.Sort(globs)
	return slices.Compact(globs)
}

// enabled is the keys of m whose entry is true, sorted.
func enabled(m map[string]bool) []string {
	var names []string
	for name, on := range m {
		if on {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// nonEmpty is the values of m that are not empty, ordered by their keys.
func nonEmpty(m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] != "" {
			out = append(out, m[k])
		}
	}
	return out
}

// Pos returns the position of the CUE path below `project` that the
// decoder recorded, as "file:line:col" relative to the project root (""
// when unknown).
func (p *Project) Pos(path string) string {
	pos, ok := p.Positions.At[path]
	if !ok {
		return ""
	}
	return pos.Rel(p.Positions.Root)
}

// FieldName names the field at path below `project` for a message that
// tells the user to change it: "project.agent.models.plan", with
// " (set.cue:9:12)" when the project's own files declare it.
func (p *Project) FieldName(path ...string) string {
	name := "project." + strings.Join(path, ".")
	if p.Declares(path...) {
		name += " (" + p.Pos(strings.Join(path, ".")) + ")"
	}
	return name
}

// Declares reports whether the project's own files (set.cue and the rest
// of its package), rather than its profile or the schema, declare the
// field at path below `project`, for the paths FieldError knows.
func (p *Project) Declares(path ...string) bool { return p.Positions.Declared[strings.Join(path, ".")] }

// FieldError is an error about the field at path below `project` (e.g.
// "stacks", "feature", "review"), at the position the decoder recorded for
// it: the spec list, the main branch, every gate, every stack entry
// (stacks.TYPE.GATE, integration.GATE) and an explicit plan's changes.
// load.Details prints it as the evaluator's own errors:
// `project.stacks.feature.review: MESSAGE: set.cue:9:27`.
func (p *Project) FieldError(path []string, format string, args ...any) *FieldError {
	return &FieldError{
		Path: slices.Clone(path),
		Pos:  p.Positions.At[strings.Join(path, ".")],
		Msg:  fmt.Sprintf(format, args...),
	}
}

// Generated is a generated file and how to rebuild it.
type Generated struct {
	Regenerate []string `json:"regenerate"`
	Runner     string   `json:"runner,omitempty"`
}

// Inline says where tests written inside the code's files are: in a
// file matching the glob Files, the lines from the first one matching the
// regular expression From to the file's end.
type Inline struct {
	Files string `json:"files"`
	From  string `json:"from"`
}

// Forbidden is a pattern that must not appear in added lines.
type Forbidden struct {
	Pattern string   `json:"pattern"`
	Message string   `json:"message"`
	Paths   []string `json:"paths"`
}

// Gate kinds.
const (
	KindExec       = "exec"
	KindScopeCheck = "scope_check"
	KindTestFiles  = "test_files"
	KindSpecVerify = "spec_verify"
	KindRules      = "rules"
	KindReview     = "review"
)

// Graders of a spec_verify gate.
const (
	GraderDeterministic = "deterministic"
	GraderLLM           = "llm"
)

// What a spec_verify gate asks of the change folder's tasks.md (Gate.Tasks).
const (
	TasksAny        = "any"
	TasksAllChecked = "all-checked"
)

// Modes of a gate in a stack.
const (
	ModeRun  = "run"
	ModeWarn = "warn"
	ModeSkip = "skip"
)

// Gate is one check; Project.Gates keys it by its name.
type Gate struct {
	Kind    string            `json:"kind"`
	Mode    string            `json:"mode"`
	Order   int               `json:"order"`
	When    string            `json:"when,omitempty"`
	Run     []string          `json:"run,omitempty"`
	Env     map[string]string `json:"env"`
	Timeout Duration          `json:"timeout,omitempty"`
	Runner  string            `json:"runner,omitempty"`
	Export  []string          `json:"export"`
	// Failures is an exec gate's RE2 pattern for the individual failures
	// its output reports, one per match on a line (see schema/gate.cue);
	// "" when it has none.
	Failures string `json:"failures,omitempty"`
	// Describe is an exec gate's argv that prints, changing nothing, what
	// Run will do in the tree it runs in (see schema/gate.cue); setctl
	// doctor runs it. nil when it has none.
	Describe []string `json:"describe,omitempty"`
	// Grader is how a spec_verify gate decides: GraderDeterministic or
	// GraderLLM; "" for the other kinds.
	Grader string `json:"grader,omitempty"`
	// Tasks is what a spec_verify gate asks of the change folder's
	// tasks.md: TasksAny or TasksAllChecked; "" for the other kinds.
	Tasks string `json:"tasks,omitempty"`
	// Prompt, BlockOn, MaxDiffBytes and Repairs configure a model-graded
	// gate (Graded); they are zero for the others. Prompt is a Go
	// text/template executed on judge.PromptData (decode checks it);
	// BlockOn the lowest severity of a finding that blocks ("critical",
	// "high", "medium" or "low"); MaxDiffBytes bounds the diff the
	// prompt shows; Repairs is how many times an invalid answer is sent
	// back to the model with its problems before the gate errors.
	Prompt       string `json:"prompt,omitempty"`
	BlockOn      string `json:"blockOn,omitempty"`
	MaxDiffBytes int    `json:"maxDiffBytes,omitempty"`
	Repairs      int    `json:"repairs,omitempty"`
}

// Graded reports whether a model grades the gate: a review, or a
// spec_verify whose grader is "llm".
func (g Gate) Graded() bool {
	return g.Kind == KindReview || g.Kind == KindSpecVerify && g.Grader == GraderLLM
}

// StackEntry places a gate in a stack; empty fields fall back to the gate.
type StackEntry struct {
	Mode  string `json:"mode,omitempty"`
	Order *int   `json:"order,omitempty"`
}

// Stack maps gate names to their entries.
type Stack map[string]StackEntry

// Budgets bound the work on one change (journal.Budgets records them in
// the run's first event).
type Budgets struct {
	// Retries are the times a change may go back to its agent, per
	// cause: a blocking verify gate, a red integration stack, and a merge
	// conflict with work that reached main after its base (not the
	// agent's mistake: a bound against a change that never gets through).
	Retries struct {
		Verify      int `json:"verify"`
		Integration int `json:"integration"`
		Conflicts   int `json:"conflicts"`
	} `json:"retries"`
	Tokens      map[string]int `json:"tokens"`
	Iterations  int            `json:"iterations"`
	WallTime    Duration       `json:"wallTime"`
	GateTimeout Duration       `json:"gateTimeout"`
}

// RunTokens is the token budget of the whole run (budgets.tokens.run),
// 0 when the project sets none. The other keys of Tokens are sizes.
func (b Budgets) RunTokens() int { return b.Tokens["run"] }

// Sentinel is the supervision of running changes (schema.#Sentinel);
// engine/sentinel compiles its rules and grace.
type Sentinel struct {
	// Heartbeat is how often a live run journals MONITOR_HEARTBEAT.
	Heartbeat Duration `json:"heartbeat"`
	// Rules are keyed by rule name ([a-z][a-z0-9_]*).
	Rules map[string]SentinelRule `json:"rules"`
	// Grace maps an activity glob to how long a matching activity holds
	// back the rules with Graced set.
	Grace map[string]Duration `json:"grace"`
}

// SentinelRule is one supervision rule. Decode guarantees that exactly
// one of Action and Ladder is set and that When compiles against
// cond.SentinelEnv.
type SentinelRule struct {
	When   string   `json:"when"`
	Action string   `json:"action,omitempty"`
	Ladder []string `json:"ladder,omitempty"`
	// Every is how long When may keep holding after a firing before the
	// next step fires.
	Every Duration `json:"every"`
	// Graced says whether a matching grace glob holds the rule back.
	Graced bool `json:"graced"`
	// Fails is the failed status of a fail step: "stalled" or
	// "agent_error".
	Fails string `json:"fails"`
	// Backoff is the wait before the first restart of an episode, doubled
	// for each further one; 0 when none.
	Backoff Duration `json:"backoff,omitempty"`
}

// Planner strategies (schema.#PlannerStrategy): static and openspec need
// no model; the others ask the plan role's model. openspec plans from the
// OpenSpec change folders on main instead of the markdown spec.
const (
	StrategyStatic     = "static"
	StrategySingle     = "single"
	StrategyThreePhase = "three-phase"
	StrategyAuto       = "auto"
	StrategyOpenSpec   = "openspec"
)

// Planner configures how the spec becomes a plan; planner.Planner is the
// model planner it configures.
type Planner struct {
	Strategy                 string `json:"strategy"`
	MaxRequirementsPerChange int    `json:"maxRequirementsPerChange"`
	// Scopes maps a spec domain to the globs of its paths (true: the glob
	// counts), the scope of every change the static strategy plans for it.
	Scopes map[string]map[string]bool `json:"scopes"`
	// Replan is "auto" (replan uncovered requirements once nothing more
	// can merge) or "off".
	Replan string `json:"replan"`
	// MaxReplanCycles bounds the replans of one run.
	MaxReplanCycles int `json:"maxReplanCycles"`
	// SingleCallMaxInputTokens is auto's threshold on the single call's
	// estimated input tokens.
	SingleCallMaxInputTokens int `json:"singleCallMaxInputTokens"`
	// Repairs is how many times one call's rejected answer is sent back
	// with its errors.
	Repairs int `json:"repairs"`
	// Parallel bounds the three-phase domain calls running at once.
	Parallel int `json:"parallel"`
	// Rules are the planning rules given to the model, by name; an empty
	// text drops one.
	Rules map[string]string `json:"rules"`
	// Prompts are the model planner's templates; decode guarantees that
	// they parse and execute on sample data when set, and that they are
	// set when the strategy needs a model.
	Prompts PlannerPrompts `json:"prompts"`
}

// ScopeOf is the scope the static strategy gives a change of domain: the
// globs of its scopes entry that are true, sorted; nil for none.
func (p Planner) ScopeOf(domain string) []string { return enabled(p.Scopes[domain]) }

// NeedsModel reports whether the strategy asks a model for the plan.
func (p Planner) NeedsModel() bool {
	return p.Strategy != StrategyStatic && p.Strategy != StrategyOpenSpec
}

// FromFolders reports whether the plan comes from the OpenSpec change
// folders people wrote (StrategyOpenSpec): each change is a folder already
// on main, which set neither writes nor lets an agent edit, and the project
// has no markdown spec.
func (p Planner) FromFolders() bool { return p.Strategy == StrategyOpenSpec }

// PlannerPrompts are the model planner's prompt templates (Go
// text/template), by the call they make.
type PlannerPrompts struct {
	System string `json:"system"`
	Single string `json:"single"`
	Brief  string `json:"brief"`
	Domain string `json:"domain"`
	Merge  string `json:"merge"`
	Repair string `json:"repair"`
}

// Agent configures what implements changes.
type Agent struct {
	Adapter    string   `json:"adapter"`
	Argv       []string `json:"argv,omitempty"`
	Recordings string   `json:"recordings,omitempty"`
	Models     Models   `json:"models"`
	// Transport is how the plan, review and verify roles reach their
	// models ("claude", "codex", "anthropic", "openai"); "" means the
	// adapter's own CLI for claude and codex agents, and none otherwise.
	Transport string `json:"transport,omitempty"`
	// Fallbacks lists, per role, the models tried when the one before
	// failed transiently: "MODEL" on the role's transport, or
	// "TRANSPORT:MODEL".
	Fallbacks map[string][]string `json:"fallbacks"`
	Env       map[string]string   `json:"env"`
	// Permissions is the permission mode of a claude or codex agent:
	// "auto", "bypass" or "acceptEdits" (see agent.ClaudePermissions and
	// agent.CodexPermissions); exec and replay agents ignore it. ""
	// means "auto".
	Permissions string `json:"permissions,omitempty"`
}

// Transports are the ways of reaching the models of the plan, review and
// verify roles (schema #Transport).
var Transports = []string{"claude", "codex", "anthropic", "openai"}

// Models picks a model per role.
type Models struct {
	Implement string `json:"implement,omitempty"`
	Plan      string `json:"plan,omitempty"`
	Review    string `json:"review,omitempty"`
	Verify    string `json:"verify,omitempty"`
}

// Of is the model of role ("implement", "plan", "review" or "verify").
func (m Models) Of(role string) string {
	switch role {
	case "implement":
		return m.Implement
	case "plan":
		return m.Plan
	case "review":
		return m.Review
	case "verify":
		return m.Verify
	}
	return ""
}

// Runner kinds.
const (
	RunnerHost   = "host"
	RunnerDagger = "dagger"
)

// Runner configures where gates run; runner.Runner is what runs them
// there.
type Runner struct {
	Kind   string        `json:"kind"`
	Dagger *DaggerRunner `json:"dagger,omitempty"`
}

// DaggerRunner configures gates in Dagger containers. Decode guarantees
// that exactly one of From, Rootfs and Tarball is set when any gate runs
// on dagger.
type DaggerRunner struct {
	From    string            `json:"from,omitempty"`
	Rootfs  string            `json:"rootfs,omitempty"`
	Tarball string            `json:"tarball,omitempty"`
	Workdir string            `json:"workdir"`
	Exclude map[string]bool   `json:"exclude"`
	Caches  map[string]string `json:"caches"`
	Mounts  map[string]Mount  `json:"mounts"`
	Env     map[string]string `json:"env"`
	// Hosts are the engines the gates run on, by runner-host URL; empty
	// means the one engine the environment names.
	Hosts map[string]DaggerHost `json:"hosts"`
}

// DaggerHost is one engine of DaggerRunner.Hosts.
type DaggerHost struct {
	// Parallelism is how many gates run on the engine at once (>= 1).
	Parallelism int `json:"parallelism"`
}

// HostPath is where a host path of the runner (Rootfs, Tarball, a mount's
// Source) is on the machine that runs set: p itself when absolute, else p
// below the project root. The dagger runner reads it there, and setctl
// doctor checks it there.
func (d *DaggerRunner) HostPath(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// HostURLs is the runner-host URLs of Hosts, sorted.
func (d *DaggerRunner) HostURLs() []string { return slices.Sorted(maps.Keys(d.Hosts)) }

// Excluded is the globs exclude keeps out of the container, sorted: those
// whose entry is true.
func (d *DaggerRunner) Excluded() []string { return enabled(d.Exclude) }

// Base says which base the runner uses, as "from <ref>", "rootfs <dir>"
// or "tarball <file>".
func (d *DaggerRunner) Base() string {
	switch {
	case d.From != "":
		return "from " + d.From
	case d.Rootfs != "":
		return "rootfs " + d.Rootfs
	case d.Tarball != "":
		return "tarball " + d.Tarball
	}
	return ""
}

// Mount is a host directory mounted into a container.
type Mount struct {
	Source   string `json:"source"`
	ReadOnly bool   `json:"readOnly"`
}

// Plan is an explicit plan written in set.cue (schema.#Plan): changes by
// name, deferred requirements with their reasons. It is what the user
// writes; plan.Plan is what a run executes, made from it (the explicit
// strategy) or by another strategy.
type Plan struct {
	Changes  map[string]Change `json:"changes"`
	Deferred map[string]string `json:"deferred"`
}

// Change is one unit of work, implemented by one agent in one worktree. It
// is the one change type of the engine: an explicit plan in set.cue
// decodes into it (schema.#Change), a planner makes it, a plan file stores
// it (plan.Change is this type), and gate and sentinel conditions read it
// as `change`. The json tags are the plan file's and the schema's names
// (a test in engine/config/decode checks the schema has no field Go lacks
// and the reverse); the expr tags are the names conditions use, and
// expr:"-" keeps a field out of their vocabulary.
type Change struct {
	Name        string `json:"name" expr:"name"`
	Type        string `json:"type" expr:"type"`
	Size        string `json:"size" expr:"size"`
	Description string `json:"description,omitempty" expr:"-"`
	// Domain is the spec domain of the change's requirements. The engine
	// sets it (the static planner does); set.cue cannot.
	Domain       string   `json:"domain,omitempty" expr:"domain"`
	Requirements []string `json:"requirements" expr:"requirements"`
	DependsOn    []string `json:"dependsOn" expr:"dependsOn"`
	// Because says, by name of a change in DependsOn, why this change
	// waits for it when the planner knows ("MODIFIED \"Create a short
	// link\" (links), which add-links ADDs"); the engine sets it, set.cue
	// cannot.
	Because map[string]string `json:"because,omitempty" expr:"-"`
	// Scope lists the path globs the change may touch; empty means
	// anywhere.
	Scope []string `json:"scope,omitempty" expr:"scope"`
	// Agent and Model override the project's agent for this change.
	Agent string `json:"agent,omitempty" expr:"-"`
	Model string `json:"model,omitempty" expr:"-"`
	// Pos is where an explicit plan declared the change ("set.cue:30:3").
	// The engine sets it; set.cue cannot.
	Pos string `json:"pos,omitempty" expr:"-"`
}

// Duration is a time.Duration written as a Go duration string.
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q: %w", b, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration in Go's notation.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).String()), nil
}

// D is the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String is the duration in Go's notation.
func (d Duration) String() string { return time.Duration(d).String() }
