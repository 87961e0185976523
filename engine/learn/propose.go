package learn

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/markdown"
)

// Propose is the learnings eps call for: one per signature seen in at
// least threshold distinct changes or threshold distinct runs, unless a
// learning in adopted already names it (its Signature). Pass in adopted
// every learning the project has, enabled or not: one a person turned
// off is not proposed again.
//
// A gate signature gives a convention, a sentence for agents built from
// the evidence alone; a conflict signature a planning learning that
// serialises the changes touching its path. Sentinel episodes are
// evidence for the report, not proposals; and set proposes no rule: a
// forbidden pattern would need the diffs that fixed the failures, which
// the journal does not hold, to be more than a guess.
//
// The result is the same for the same episodes: IDs are a hash of the
// signature, names are unique among the proposals and unlike adopted's,
// and proposals come ordered by changes (most first), then
// signature.
func Propose(eps []Episode, threshold int, adopted []config.NamedLearning) []Proposal {
	threshold = max(threshold, 1)
	known := map[string]bool{}
	taken := map[string]bool{}
	for _, l := range adopted {
		taken[l.Name] = true
		if l.Signature != "" {
			known[l.Signature] = true
		}
	}
	groups := map[string][]Episode{}
	for _, ep := range eps {
		if ep.Kind == EpisodeSentinel || known[ep.Signature] {
			continue
		}
		groups[ep.Signature] = append(groups[ep.Signature], ep)
	}
	var out []Proposal
	for sig, g := range groups {
		changes, runs := distinct(g, func(ep Episode) string { return ep.Change }), distinct(g, func(ep Episode) string { return ep.Run })
		if changes < threshold && runs < threshold {
			continue
		}
		// Evidence by run (run IDs sort as they started), then change:
		// changes at work at once fail in any order.
		slices.SortStableFunc(g, func(a, b Episode) int {
			return cmp.Or(cmp.Compare(a.Run, b.Run), cmp.Compare(a.Change, b.Change), cmp.Compare(a.Seq, b.Seq))
		})
		p := Proposal{ID: ID(sig), Signature: sig, Changes: changes, Runs: runs}
		for _, ep := range g {
			ev := Evidence{Run: ep.Run, Change: ep.Change, Round: ep.Round, Line: ep.Line}
			if ep.Kind == EpisodeConflict {
				ev.Line = strings.Join(ep.Paths, ", ")
			}
			p.Evidence = append(p.Evidence, ev)
		}
		switch g[0].Kind {
		case EpisodeGate:
			p.Kind, p.Text = config.LearningConvention, conventionText(g)
		case EpisodeConflict:
			p.Kind, p.Serialise = config.LearningPlanning, g[0].Paths
			p.Text = planningText(g[0].Paths[0])
		default:
			continue
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Proposal) int {
		return cmp.Or(cmp.Compare(b.Changes, a.Changes), cmp.Compare(a.Signature, b.Signature))
	})
	for i := range out {
		out[i].Name = uniqueName(baseName(groups[out[i].Signature][0]), taken)
	}
	return out
}

// ID is a proposal's ID for its signature: the first 8 hex digits of the
// signature's SHA-256.
func ID(signature string) string {
	sum := sha256.Sum256([]byte(signature))
	return hex.EncodeToString(sum[:4])
}

func distinct(g []Episode, key func(Episode) string) int {
	seen := map[string]bool{}
	for _, ep := range g {
		seen[key(ep)] = true
	}
	return len(seen)
}

// conventionText is a convention's sentence for a gate signature: it
// names the gate, how many changes it failed (or in how many runs, when
// they are more) and the failure's line, as
// printed when every episode printed the same, else as the signature
// holds it, and tells the agent to check its change against it.
func conventionText(g []Episode) string {
	line := g[0].Line
	for _, ep := range g[1:] {
		if ep.Line != line {
			line = signatureOf(g[0])
			break
		}
	}
	gate := "The " + markdown.Code(g[0].Gate) + " gate"
	if g[0].Stage != "verify" {
		gate += " of the " + g[0].Stage + " stack"
	}
	if rule, files, message, ok := brokenRule(g[0]); ok {
		return fmt.Sprintf("%s failed earlier changes on lines they added to %s files that its rule %s forbids (%s): add no such line.",
			gate, markdown.Code(files), markdown.Code(rule), strings.TrimSuffix(message, "."))
	}
	failed := english.Plural(distinct(g, func(ep Episode) string { return ep.Change }), "earlier change")
	if runs := distinct(g, func(ep Episode) string { return ep.Run }); runs > distinct(g, func(ep Episode) string { return ep.Change }) {
		failed = "changes in " + english.Plural(runs, "earlier run")
	}
	return fmt.Sprintf("%s failed %s with %s. Before you finish, check that your change does not make it fail with that.",
		gate, failed, markdown.Code(line))
}

// brokenRule is the rule, file pattern and message of a rules-gate
// episode (its signature's "forbidden <rule> in <files>", its line's
// "<path>:<n>: <rule>: <message>: <added text>"; the message taken to
// its first colon); ok is false for any other episode.
func brokenRule(ep Episode) (rule, files, message string, ok bool) {
	what, ok := strings.CutPrefix(signatureOf(ep), "forbidden ")
	i := strings.LastIndex(what, " in ")
	m := ruleHit.FindStringSubmatchIndex(ep.Line)
	if !ok || i < 0 || m == nil {
		return "", "", "", false
	}
	rule, files = what[:i], what[i+len(" in "):]
	message, _, _ = strings.Cut(ep.Line[m[1]:], ": ")
	return rule, files, message, true
}

// planningText is a planning learning's sentence for a conflict on path.
func planningText(path string) string {
	return fmt.Sprintf("Changes that touched %s conflicted when they were merged: plan the changes that may touch it one after another, not side by side.", markdown.Code(path))
}

var nameWord = regexp.MustCompile(`[a-z][a-z0-9]*`)

// maxNameWords bounds the words of the failure a name takes.
const maxNameWords = 4

// baseName is a #Name for ep's proposal: the gate and the first words of
// its line ("doc-every-file-needs-header"), "serialise-" and the path's
// words for a conflict.
func baseName(ep Episode) string {
	var words []string
	switch ep.Kind {
	case EpisodeConflict:
		words = append([]string{"serialise"}, nameWords(strings.Join(ep.Paths, " "), 0, 0)...)
	default:
		gate := nameWords(ep.Gate, 0, 0)
		line := nameWords(placeholder.ReplaceAllString(signatureOf(ep), " "), 3, maxNameWords+len(gate))
		// A line that starts with the gate's name ("doc: …" of the doc
		// gate) does not say it twice.
		for len(line) > 0 && slices.Contains(gate, line[0]) {
			line = line[1:]
		}
		words = append(gate, line[:min(len(line), maxNameWords)]...)
	}
	if len(words) == 0 {
		return "learning"
	}
	return strings.Join(words, "-")
}

// nameWords are s's lower-case words of at least minLen characters (at
// most n of them; n 0 is all).
func nameWords(s string, minLen, n int) []string {
	var out []string
	for _, w := range nameWord.FindAllString(strings.ToLower(s), -1) {
		if len(w) < minLen {
			continue
		}
		out = append(out, w)
		if len(out) == n {
			break
		}
	}
	return out
}

// uniqueName is base, or base-2, base-3 … when taken has it; the name
// it gives is taken from then on.
func uniqueName(base string, taken map[string]bool) string {
	name := base
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	taken[name] = true
	return name
}
