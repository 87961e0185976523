package learn

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/gate"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// maxLinesPerFailure bounds the episodes one failing gate gives from its
// output: a failure that printed a hundred lines is not a hundred
// lessons.
const maxLinesPerFailure = 10

var (
	ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)`)
	// slashPath is a token with a slash (a path, a URL, a package),
	// dottedPath one with a file extension (a lower-case one of at most
	// five characters, so that fmt.Println and 1.2.3 are not files);
	// each with an optional :line or :line:column.
	slashPath  = regexp.MustCompile(`[\w.\-@~+]*(?:/[\w.\-@~+]*)+(?::\d+){0,2}`)
	dottedPath = regexp.MustCompile(`[\w\-@~+]+(?:\.[\w\-]+)*\.[a-z][a-z0-9]{0,4}\b(?::\d+){0,2}`)
	hexRun     = regexp.MustCompile(`\b[0-9a-fA-F]{7,}\b`)
	// timestamp is an ISO 8601 date and time (2026-11-27T08:01:02.5Z,
	// 2026-11-27 08:01:02), uuid a UUID, hexNumber a 0x literal (an
	// address, a program counter) and duration a Go duration of more
	// than one unit (1m30s): each differs from run to run in the same
	// failure's line, and number alone would leave part of it.
	timestamp = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b`)
	uuid      = regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)
	hexNumber = regexp.MustCompile(`\b0[xX][0-9a-fA-F]+\b`)
	duration  = regexp.MustCompile(`\b(?:\d+(?:\.\d+)?(?:h|ms|m|s|µs|us|ns)){2,}\b`)
	digits    = regexp.MustCompile(`\d+(?:\.\d+)?`)
	number    = regexp.MustCompile(`(^|[^\w.<])(\d+(?:[.,]\d+)*)`)
	space     = regexp.MustCompile(`\s+`)
	// word is what makes a line meaningful: a word of four letters or
	// more, once the placeholders are gone.
	word        = regexp.MustCompile(`[A-Za-z]{4,}`)
	placeholder = regexp.MustCompile(`<(?:file|sha|time|n)>`)
	// boilerplate are normalised lines test runners and build tools
	// print around every failure, whatever it is: exit statuses, and the
	// summaries and section headings of go test (and a panic's
	// goroutine lines), jest, vitest, mocha,
	// pytest, cargo, eslint, tsc, ruff, golangci-lint, npm, yarn and pnpm.
	// Every failing change of a project prints them alike, so each would
	// otherwise recur in every change and be proposed.
	boilerplate = []*regexp.Regexp{
		regexp.MustCompile(`^exit status <n>$`),
		regexp.MustCompile(`^make(?:\[<n>\])?: \*\*\*`),
		regexp.MustCompile(`^npm (?:ERR!|error)`),
		regexp.MustCompile(`ELIFECYCLE`),
		regexp.MustCompile(`^info Visit `),
		regexp.MustCompile(`^FAIL(?: <file>(?: <n>s| \(<n> ?m?s\)| \[[^\]]*\])?)?$`),
		regexp.MustCompile(`^(?i)(?:error:? )?(?:command|process) (?:failed|completed|finished) with exit code <n>\.?$`),
		regexp.MustCompile(`^(?i:tests? failed\.?)$`),
		regexp.MustCompile(`^(?:Tests|Test Suites|Test Files|Snapshots|Time|Duration):? +<n>`),
		regexp.MustCompile(`^Ran all test suites`),
		regexp.MustCompile(`^<n> (?:passing|failing|pending)\b`),
		regexp.MustCompile(`^=+ .* =+$`),
		regexp.MustCompile(`^test result: FAILED\.`),
		regexp.MustCompile(`^(?:error: )?could not compile `),
		regexp.MustCompile(`^error: test failed, to rerun pass`),
		regexp.MustCompile(`^failures:$`),
		regexp.MustCompile(`^✖ <n> problems? \(`),
		regexp.MustCompile(`^<n> errors? and <n> warnings? potentially fixable`),
		regexp.MustCompile(`^Found <n> errors?(?: in <n> files?)?\.$`),
		regexp.MustCompile(`^\[\*\] <n> fixable with the`),
		regexp.MustCompile(`^<n> issues?:?$`),
		regexp.MustCompile(`^\* [\w-]+: <n>$`),
		regexp.MustCompile(`^goroutine <n> \[`),
		regexp.MustCompile(`^created by `),
	}
	// fence is a markdown code fence line.
	fence = regexp.MustCompile("^(?:```+|~~~+)[\\w-]*$")
)

// Normalise is line as a signature holds it, the same for the same
// failure in every change and run: terminal colours gone, timestamps
// <time>, path-like tokens (with a slash or a file extension, with an
// optional :line or :line:column) <file>, UUIDs and runs of seven or more
// hex digits <sha>, other numbers (0x ones, those of a duration like
// 1m30s too) <n>, and runs of white space one space.
func Normalise(line string) string {
	s := ansiEscape.ReplaceAllString(line, "")
	s = strings.TrimSpace(s)
	s = timestamp.ReplaceAllString(s, "<time>")
	s = uuid.ReplaceAllString(s, "<sha>")
	s = slashPath.ReplaceAllStringFunc(s, func(m string) string {
		if !strings.ContainsFunc(m, isWordRune) {
			return m // "//", a lone "/"
		}
		return "<file>"
	})
	s = dottedPath.ReplaceAllStringFunc(s, func(m string) string {
		if m == "e.g" || m == "i.e" {
			return m
		}
		return "<file>"
	})
	s = hexRun.ReplaceAllStringFunc(s, func(m string) string {
		if strings.ContainsAny(m, "0123456789") && strings.ContainsAny(strings.ToLower(m), "abcdef") {
			return "<sha>"
		}
		return m
	})
	s = hexNumber.ReplaceAllString(s, "<n>")
	s = duration.ReplaceAllStringFunc(s, func(m string) string { return digits.ReplaceAllString(m, "<n>") })
	s = number.ReplaceAllString(s, "$1<n>")
	return strings.TrimSpace(space.ReplaceAllString(s, " "))
}

func isWordRune(r rune) bool {
	return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// meaningful reports whether a normalised line says something of the
// failure: a word of four letters or more, and not a runner's
// boilerplate.
func meaningful(norm string) bool {
	if !word.MatchString(placeholder.ReplaceAllString(norm, " ")) {
		return false
	}
	for _, re := range boilerplate {
		if re.MatchString(norm) {
			return false
		}
	}
	return true
}

// failureLine is one of a failed gate's lines that episodes are made
// of: Line as printed, Key what its signature holds of it (see
// signatureLine).
type failureLine struct{ Line, Key string }

// failureLines are the lines of a failed gate that episodes are made of:
// the failures its failures pattern named when there are any (but those
// accepted, which are main's); else, of a command's output as its retry
// context quotes it, the lines on which pattern (the gate's pattern of
// today; nil when it has none) names failures that are not accepted,
// one per failure, keyed by its name, when it names any; else the
// meaningful lines without set's own headline, the log's path and code
// fences; else, of a built-in gate's own words, its findings (see
// builtinLines). Lines with the same Key are one; at most
// maxLinesPerFailure.
func failureLines(d journal.VerifyGateData, pattern *regexp.Regexp, accepted []string) []failureLine {
	var lines []string
	all := strings.Split(d.RetryContext, "\n")
	verdict, builtin := strings.CutPrefix(all[0], "Gate "+d.Gate+" failed: ")
	recorded := slices.DeleteFunc(slices.Clone(d.Failures), func(f string) bool { return slices.Contains(accepted, f) })
	switch {
	case len(recorded) > 0:
		lines = recorded
	case strings.HasPrefix(all[0], "Gate "+d.Gate+" ("):
		lines = all[1:] // "Gate X (`cmd`) failed with exit code N. …"
	case builtin:
		lines = builtinLines(verdict, all[1:], d.Kind)
	default:
		lines = all
	}
	var raws []string
	for _, l := range lines {
		raw := strings.TrimSpace(ansiEscape.ReplaceAllString(l, ""))
		if !fence.MatchString(raw) && !strings.HasPrefix(raw, "Full log: ") {
			raws = append(raws, raw)
		}
	}
	var out []failureLine
	if len(d.Failures) == 0 && !builtin && pattern != nil {
		out = namedLines(raws, pattern, accepted)
	}
	if len(out) == 0 {
		for _, raw := range raws {
			if meaningful(Normalise(raw)) {
				out = append(out, failureLine{raw, signatureLine(d, raw)})
			}
		}
	}
	seen := map[string]bool{}
	out = slices.DeleteFunc(out, func(l failureLine) bool {
		dup := seen[l.Key]
		seen[l.Key] = true
		return dup
	})
	return out[:min(len(out), maxLinesPerFailure)]
}

// namedLines are the lines of a command's output on which pattern names
// failures that are not accepted, one per failure, keyed by its name
// normalised, when the name is meaningful: the failures the gate's run
// records when it has the pattern (gate.FailureNames), from the lines
// its retry context quotes.
func namedLines(lines []string, pattern *regexp.Regexp, accepted []string) []failureLine {
	var out []failureLine
	for _, raw := range lines {
		for _, name := range gate.FailureNames(pattern, raw) {
			if key := Normalise(name); meaningful(key) && !slices.Contains(accepted, name) {
				out = append(out, failureLine{raw, key})
			}
		}
	}
	return out
}

// ruleHit is a finding of the rules gate as its retry context lists it:
// "<path>:<line>: <rule>: <message>: <added text>" (the rule's name has
// no colon: a #Name, or "learning <name>").
var ruleHit = regexp.MustCompile(`^(.+?):\d+: ([^:]+): `)

// signatureLine is what a gate episode's signature holds of line, one of
// the failure's lines of d: line normalised; for a finding of the rules
// gate, the rule and the file pattern it was hit in ("forbidden no-println
// in *.go"), since the line it names and the text the change added are
// the change's own, and the same rule broken in two changes is one
// failure. Lines of one failure with the same signatureLine are one
// episode.
func signatureLine(d journal.VerifyGateData, line string) string {
	if d.Kind == config.KindRules {
		if m := ruleHit.FindStringSubmatch(line); m != nil {
			return "forbidden " + m[2] + " in " + filePattern(m[1])
		}
	}
	return Normalise(line)
}

// filePattern is the glob of the files like path: "*" and its extension
// ("*.go"), or its base name when it has none ("Makefile").
func filePattern(path string) string {
	base := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		return "*" + base[i:]
	}
	return base
}

// builtinLines are the findings of a built-in or model-graded gate's
// retry context, whose first line was "Gate X failed: " and headline:
// its list's items ("- item"), a model's blocking findings ("1. [major]
// a.go:3", its message on the next line, as "[major] a.go:3: message"),
// and the headline's first sentence. The headline is left out when the
// items are the findings and it only introduces them: a model's
// ("the reviewer model (…) reported 2 findings …:"), the rules gate's
// ("lines this change adds match forbidden patterns:"). Another's, as
// spec_verify's "<n> of the change's <n> requirements are not named by
// any test line this change adds:", is the lesson that recurs, its items
// (the requirements) the change's own. set's advice around them ("Remove
// or rewrite these lines.", "Fix: …") is the same for every failure, and
// no finding; a model's findings below the blocking severity ("It also
// reported … below the blocking severity:") did not fail the gate.
func builtinLines(headline string, rest []string, kind string) []string {
	var items []string
	blocking, finding := true, ""
	for _, l := range rest {
		l = strings.TrimSpace(l)
		if part, ok := strings.CutPrefix(l, "It also "); ok {
			blocking, finding = !strings.Contains(part, "below the blocking severity"), ""
			continue
		}
		switch {
		case !blocking:
		case finding != "":
			if l != "" && !strings.HasPrefix(l, "Fix: ") {
				items = append(items, finding+": "+l)
			}
			finding = ""
		case numberedFinding.MatchString(l):
			finding = numberedFinding.FindStringSubmatch(l)[1]
		default:
			if item, ok := strings.CutPrefix(l, "- "); ok {
				items = append(items, item)
			}
		}
	}
	if i := strings.Index(headline, ". "); i >= 0 {
		headline = headline[:i+1]
	}
	introduces := kind == config.KindRules || modelHeadline.MatchString(headline)
	if strings.HasSuffix(headline, ":") && len(items) > 0 && introduces {
		return items
	}
	return append([]string{headline}, items...)
}

// modelHeadline is the headline of a model-graded gate's verdict.
var modelHeadline = regexp.MustCompile(`^the [\w-]+ model \(`)

// numberedFinding is a model-graded gate's finding as its retry context
// numbers it: "1. [major] a.go:3 (REQ-1)", the severity and place kept.
var numberedFinding = regexp.MustCompile(`^\d+\. (\[[^\]]+\] [^(]*?)(?: \([^)]*\))?$`)

// GateSignature is the signature of a gate episode: "<stage> gate
// <gate>: <line>", line normalised.
func GateSignature(stage, gate, line string) string {
	return stage + " gate " + gate + ": " + Normalise(line)
}

// signatureOf is the line ep's gate signature holds (see signatureLine).
func signatureOf(ep Episode) string {
	return strings.TrimPrefix(ep.Signature, ep.Stage+" gate "+ep.Gate+": ")
}

// ConflictSignature is the signature of a conflict episode on path.
func ConflictSignature(path string) string { return "conflict: " + path }

// SentinelSignature is the signature of a sentinel episode.
func SentinelSignature(rule, action string) string { return "sentinel " + rule + ": " + action }

// Episodes reads the episodes of events, a journal of one or more runs,
// ordered by the Seq of the event that reported each failure.
//
// A change is followed by its name across runs (a resumed run goes on
// with it), and an episode's Run is the run of its failure. An episode
// is open from its failure until what made it right:
//   - a gate episode (a VERIFY_GATE of stage verify or integration whose
//     result is "fail", one per failure line) until the change's next
//     VERIFY_GATE of the same stage and gate that passed, or the stage
//     passing without it (MERGE_QUEUED for verify, MERGED for either);
//     while it is open, the same gate failing again on the same line is
//     the same episode;
//   - a conflict episode (CHANGE_INTEGRATION_FAILED, reason conflict, one
//     per path; Round its integration attempt) and a sentinel episode
//     (SENTINEL_ACTION) until the change is MERGED: Fixed is then the
//     merged integration attempt, 0 for a sentinel episode, which has
//     no round, and FixedSeq the MERGED event.
//
// A change's STATE_CHANGE to a failed status (failed:*) ends its open
// episodes unfixed. A failure of main that the run accepted for the gate
// (BASELINE_ACCEPTED, setctl apply --accept-baseline) is no failure line
// of a change.
//
// A gate's failure lines are the failures its VERIFY_GATE recorded (the
// names its failures pattern gave them in that run). Of a failure that
// recorded none, they are the lines its retry context quotes of the
// output, but when patterns holds a pattern for the gate (its failures
// pattern as the project gives it today) that names failures on those
// lines: then the failures it names, each with the line it named it on
// as its Line, so that a pattern added after a run groups that run's
// failures as it groups the runs after it. patterns may be nil. Only
// the tail of the output the retry context quotes is read so.
//
// An open episode counts the change's RETRY_SCHEDULED events and its
// agent iterations' tokens. From is the change's head when it failed
// (its last AGENT_ITERATION's, or its DISPATCH base), To its head when it
// was fixed. Events that do not decode are skipped: a journal written by
// an older set still gives what it can.
func Episodes(events []journal.Event, patterns map[string]*regexp.Regexp) []Episode {
	events = slices.Clone(events)
	slices.SortStableFunc(events, func(a, b journal.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	r := reader{heads: map[string]string{}, rounds: map[stageOf]int{}, accepted: map[[2]string][]string{}, patterns: patterns}
	for _, e := range events {
		if e.Type == journal.BaselineAccepted {
			if d, err := journal.Decode[journal.BaselineAcceptedData](e); err == nil {
				r.accepted[[2]string{e.Run, d.Gate}] = d.Failures
			}
		}
		if e.Change == "" {
			continue
		}
		r.read(e)
	}
	slices.SortStableFunc(r.out, func(a, b Episode) int { return cmp.Compare(a.Seq, b.Seq) })
	return r.out
}

// stageOf is a change's stage.
type stageOf struct{ change, stage string }

// reader holds what Episodes has read so far: the episodes, which of them
// are open, each change's head and latest round of each stage, and the
// failures of main each run accepted of each gate (keyed by run and
// gate), and the failures patterns Episodes was given.
type reader struct {
	out      []Episode
	open     []int // indices into out
	heads    map[string]string
	rounds   map[stageOf]int
	accepted map[[2]string][]string
	patterns map[string]*regexp.Regexp
}

func (r *reader) read(e journal.Event) {
	switch e.Type {
	case journal.Dispatch:
		if d, err := journal.Decode[journal.DispatchData](e); err == nil && d.Base != "" && r.heads[e.Change] == "" {
			r.heads[e.Change] = d.Base
		}
	case journal.AgentIteration:
		d, err := journal.Decode[journal.AgentIterationData](e)
		if err != nil {
			return
		}
		r.each(e.Change, func(ep *Episode) { ep.Tokens += d.Tokens.Total() })
		if d.Head != "" {
			r.heads[e.Change] = d.Head
		}
	case journal.RetryScheduled:
		r.each(e.Change, func(ep *Episode) { ep.Retries++ })
	case journal.StateChange:
		// A change that failed for good ends its open episodes unfixed: a
		// later run that starts it again and fails the same way
		// recurred, and its retries and tokens are that run's.
		if d, err := journal.Decode[journal.StateChangeData](e); err == nil && state.Status(d.To).Failed() {
			r.open = slices.DeleteFunc(r.open, func(i int) bool { return r.out[i].Change == e.Change })
		}
	case journal.VerifyGate:
		d, err := journal.Decode[journal.VerifyGateData](e)
		if err != nil || (d.Stage != journal.StageVerify && d.Stage != journal.StageIntegration) {
			return
		}
		r.rounds[stageOf{e.Change, d.Stage}] = max(r.rounds[stageOf{e.Change, d.Stage}], d.Attempt)
		switch d.Result {
		case "pass":
			r.close(e, func(ep *Episode) (bool, int) {
				return ep.Kind == EpisodeGate && ep.Stage == d.Stage && ep.Gate == d.Gate, d.Attempt
			})
		case "fail":
			r.gateFailed(e, d)
		}
	case journal.MergeQueued:
		r.close(e, func(ep *Episode) (bool, int) {
			return ep.Kind == EpisodeGate && ep.Stage == journal.StageVerify, r.rounds[stageOf{e.Change, journal.StageVerify}]
		})
	case journal.Merged:
		d, _ := journal.Decode[journal.MergedData](e)
		r.close(e, func(ep *Episode) (bool, int) {
			switch ep.Kind {
			case EpisodeConflict:
				return true, d.Attempt
			case EpisodeGate:
				return true, r.rounds[stageOf{e.Change, ep.Stage}]
			}
			return true, 0
		})
	case journal.ChangeIntegrationFailed:
		d, err := journal.Decode[journal.ChangeIntegrationFailedData](e)
		if err != nil || d.Reason != journal.ReasonConflict {
			return
		}
		for _, p := range d.Paths {
			r.add(Episode{Kind: EpisodeConflict, Signature: ConflictSignature(p), Run: e.Run, Change: e.Change, Seq: e.Seq,
				Round: d.Attempt, Paths: []string{p}})
		}
	case journal.SentinelAction:
		d, err := journal.Decode[journal.SentinelActionData](e)
		if err != nil {
			return
		}
		r.add(Episode{Kind: EpisodeSentinel, Signature: SentinelSignature(d.Rule, d.Action), Run: e.Run, Change: e.Change, Seq: e.Seq})
	}
}

// gateFailed opens an episode for each of the failure's lines that is
// not open already.
func (r *reader) gateFailed(e journal.Event, d journal.VerifyGateData) {
	// The gate's failures name main's too, which the run accepted
	// (setctl apply --accept-baseline): they are not the change's.
	accepted := r.accepted[[2]string{e.Run, d.Gate}]
	for _, l := range failureLines(d, r.patterns[d.Gate], accepted) {
		sig := GateSignature(d.Stage, d.Gate, l.Key)
		if slices.ContainsFunc(r.open, func(i int) bool { return r.out[i].Change == e.Change && r.out[i].Signature == sig }) {
			continue
		}
		r.add(Episode{Kind: EpisodeGate, Signature: sig, Run: e.Run, Change: e.Change, Seq: e.Seq,
			Gate: d.Gate, Stage: d.Stage, Round: d.Attempt, Line: l.Line})
	}
}

func (r *reader) add(ep Episode) {
	ep.From = r.heads[ep.Change]
	r.out = append(r.out, ep)
	r.open = append(r.open, len(r.out)-1)
}

// each calls f with every open episode of change.
func (r *reader) each(change string, f func(*Episode)) {
	for _, i := range r.open {
		if r.out[i].Change == change {
			f(&r.out[i])
		}
	}
}

// close marks the open episodes of e's change that fixes says e fixed
// as fixed, in the round it gives.
func (r *reader) close(e journal.Event, fixes func(*Episode) (bool, int)) {
	r.open = slices.DeleteFunc(r.open, func(i int) bool {
		ep := &r.out[i]
		if ep.Change != e.Change {
			return false
		}
		ok, round := fixes(ep)
		if ok {
			ep.Fixed, ep.FixedSeq, ep.To = round, e.Seq, r.heads[e.Change]
		}
		return ok
	})
}
