// Package learn turns the kept runs' journals into learnings: it reads
// episodes (a thing that went wrong in a change and what made it right)
// from the events, groups them by signature across changes and runs,
// proposes learnings for the signatures that recur (setctl learn), and
// measures the adopted ones (setctl learn --report). It reads events
// only: it runs no command and calls no model, so the same journal
// gives the same proposals. Adoption is a person's commit of the CUE it
// writes; nothing here changes a project's configuration.
package learn

// The kinds of episodes.
const (
	// EpisodeGate is a gate of a change's stage that failed, and the
	// change's later round in which it passed (or none yet).
	EpisodeGate = "gate"
	// EpisodeConflict is a merge conflict of a change with main on some
	// paths.
	EpisodeConflict = "conflict"
	// EpisodeSentinel is a sentinel rule that fired on a change.
	EpisodeSentinel = "sentinel"
)

// Episode is one thing that went wrong in one change of one run, and
// what made it right. An episode has exactly one signature: a failure
// that printed three recognisable lines is three episodes.
type Episode struct {
	// Kind is EpisodeGate, EpisodeConflict or EpisodeSentinel.
	Kind string `json:"kind"`
	// Signature names what went wrong, the same across changes and runs
	// for the same failure:
	//   - a gate's: "<stage> gate <gate>: <line>", the line one of the
	//     failure's own lines (its failures pattern's names, or the lines
	//     of its output) as Normalise gives it; for a finding of the
	//     rules gate, "forbidden <rule> in <file pattern>" ("*.go");
	//   - a conflict's: "conflict: <path>";
	//   - a sentinel's: "sentinel <rule>: <action>".
	Signature string `json:"signature"`
	// Run and Change are where it happened; Seq the event that reported
	// the failure.
	Run    string `json:"run"`
	Change string `json:"change"`
	Seq    int64  `json:"seq"`
	// Gate and Stage name a gate episode's gate and stage ("verify",
	// "integration"); Round is the failing round (the VERIFY_GATE's
	// attempt).
	Gate  string `json:"gate,omitempty"`
	Stage string `json:"stage,omitempty"`
	Round int    `json:"round,omitempty"`
	// Line is the failure's own line as printed (before Normalise);
	// Paths a conflict's paths.
	Line  string   `json:"line,omitempty"`
	Paths []string `json:"paths,omitempty"`
	// Fixed is the round in which the gate passed again, FixedSeq its
	// event, 0 when it has not (yet); From and To the branch's heads
	// before and after the iterations that fixed it ("" when unknown).
	Fixed    int    `json:"fixed,omitempty"`
	FixedSeq int64  `json:"fixedSeq,omitempty"`
	From     string `json:"from,omitempty"`
	To       string `json:"to,omitempty"`
	// Retries is how many retries the failure cost the change (the
	// RETRY_SCHEDULED events between the failure and the fix), Tokens
	// the tokens of the agent iterations in between.
	Retries int   `json:"retries"`
	Tokens  int64 `json:"tokens"`
}

// Evidence is one episode behind a proposal, as setctl learn shows it.
type Evidence struct {
	Run    string `json:"run"`
	Change string `json:"change"`
	Round  int    `json:"round,omitempty"`
	Line   string `json:"line,omitempty"`
}

// Proposal is a learning setctl learn proposes: the CUE it writes is
// Name: {kind: Kind, text: Text, signature: Signature, ...}.
type Proposal struct {
	// ID is stable for a signature: the same failure gets the same ID in
	// every run of setctl learn.
	ID string `json:"id"`
	// Name is the learning's key in set.cue (a #Name).
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	Signature string `json:"signature"`
	// Serialise is a planning proposal's globs; Pattern and Paths a
	// rule's.
	Serialise []string `json:"serialise,omitempty"`
	Pattern   string   `json:"pattern,omitempty"`
	Paths     []string `json:"paths,omitempty"`
	// Changes and Runs count the distinct changes and runs of the
	// evidence.
	Changes  int        `json:"changes"`
	Runs     int        `json:"runs"`
	Evidence []Evidence `json:"evidence"`
}
