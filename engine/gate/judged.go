package gate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/judge"
	"github.com/set-engine/set/engine/llm"
)

// Asker asks a model; *llm.Client is one.
type Asker interface {
	Ask(ctx context.Context, req llm.Request) (llm.Answer, error)
}

// Role is the model role that grades g: review for a review gate, verify
// for a spec_verify gate graded by a model; "" for a gate no model grades.
func Role(g config.Gate) llm.Role {
	switch {
	case !g.Graded():
		return ""
	case g.Kind == config.KindReview:
		return llm.Review
	}
	return llm.Verify
}

// graded evaluates a model-graded gate: it asks the gate's model to judge
// the change's bounded diff with the gate's prompt, repairs an invalid
// answer up to the gate's repairs, and turns the verdict into the gate's.
// A failed call and an answer still invalid after the repairs are errors,
// as is the gate's timeout running out: the gate never passes without a
// valid verdict, but for a spec_verify on a change without requirements,
// which has none to judge (it passes once its folder's checks hold).
func graded(ctx context.Context, in Input, d *changeDiff) (verdict, error) {
	if in.Project == nil {
		return verdict{}, fmt.Errorf("gate %s is graded by a model, and its input has no project to read its prompt from", in.Step.Gate)
	}
	g := in.Project.Gates[in.Step.Gate]
	role, kind := Role(g), judge.KindReview
	if g.Kind == config.KindSpecVerify {
		kind = judge.KindRequirements
		note := ""
		if in.Stage == graph.StageVerify {
			v, err := checkFolder(ctx, in)
			if err != nil || v.fail {
				return v, err
			}
			note = v.detail
		}
		// A change without requirements (a user folder with skip_specs:
		// true) leaves the model nothing to judge: it is not asked.
		if len(in.Change.Requirements) == 0 {
			return verdict{detail: note + "the change has no requirements for the model to judge"}, nil
		}
	}
	if in.Models == nil {
		return verdict{}, fmt.Errorf("gate %s needs the %s model, and this run has no model client", in.Step.Gate, role)
	}
	if t := time.Duration(in.Step.Timeout); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	diff, err := shown(ctx, in, d, g.MaxDiffBytes)
	if err != nil {
		return verdict{}, err
	}
	prompt, err := judge.Render(g.Prompt, promptData(in, g, diff))
	if err != nil {
		return verdict{}, fmt.Errorf("gates.%s.prompt: %w", in.Step.Gate, err)
	}
	ids := dedupe(in.Change.Requirements)
	req := llm.Request{Role: role, System: judge.System(kind), Prompt: prompt, Schema: judge.Schema(kind)}
	var log strings.Builder
	fmt.Fprintf(&log, "--- diff shown: %s", english.Plural(len(diff.Files), "file"))
	if len(diff.Omitted) > 0 {
		fmt.Fprintf(&log, "; left out (over maxDiffBytes %d):\n%s", g.MaxDiffBytes, bullets(diff.Omitted))
	} else {
		log.WriteString("\n")
	}
	fmt.Fprintf(&log, "\n--- prompt (%s role) ---\n%s\n", role, prompt)
	for repair := 0; ; repair++ {
		ans, err := in.Models.Ask(ctx, req)
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded && in.Step.Timeout > 0 {
				err = fmt.Errorf("no verdict within the gate's timeout of %s: %w", in.Step.Timeout, err)
			}
			return verdict{log: log.String()}, fmt.Errorf("the %s model could not be asked: %w", role, err)
		}
		fmt.Fprintf(&log, "\n--- answer of %s ---\n%s\n", ans.Call.Model+" via "+ans.Call.Transport, ans.Text)
		v, problems := judge.Decode(kind, ans.Text, ids)
		if problems == nil {
			return judgement(in, g, kind, role, v, ans.Call, log.String()), nil
		}
		fmt.Fprintf(&log, "\n--- problems of the answer ---\n%s", bullets(problems))
		if repair == g.Repairs {
			return verdict{log: log.String()}, fmt.Errorf("the %s model's answer does not fit the verdict's schema after %s: %s",
				role, english.Plural(g.Repairs, "repair"), strings.Join(problems, "; "))
		}
		req.Prompt = prompt + repairNote(ans.Text, problems)
	}
}

// repairNote asks the model again, after the prompt, for an answer without
// the problems of the last one.
func repairNote(answer string, problems []string) string {
	return fmt.Sprintf("\n\n## Your last answer was invalid\n\n%s\n\nIts problems:\n%s"+
		"Answer again, with the whole verdict, fixing these problems.\n", clip(answer, 4000), bullets(problems))
}

// promptData is what the gate's prompt template is executed with.
func promptData(in Input, g config.Gate, diff shownDiff) judge.PromptData {
	// The conventions the change's agent was given, its learnings among
	// them.
	conventions := append(in.Project.ConventionList(), config.Texts(in.Project.ConventionsFor(in.Change.Type, in.Change.Scope))...)
	data := judge.PromptData{
		Project: in.Project.Name, Gate: in.Step.Gate, Stage: in.Stage, Change: in.Change,
		Requirements: in.Reqs, Conventions: conventions,
		Diff: diff.Text, Omitted: diff.Omitted, BlockOn: g.BlockOn,
	}
	for _, r := range in.Project.Rules() {
		data.Rules = append(data.Rules, judge.Rule{Name: r.Name, Pattern: r.Pattern, Message: r.Message, Paths: r.Paths})
	}
	return data
}

// judgement turns a valid verdict into the gate's: it fails when a
// requirement is judged not implemented or a finding is of the gate's
// blockOn severity or worse; it warns when there are only lesser
// findings. Either way the retry context lists every finding, the
// blocking ones first, each with its place and fix.
func judgement(in Input, g config.Gate, kind string, role llm.Role, v judge.Verdict, call llm.Call, log string) verdict {
	var blocking, other []judge.Finding
	for _, f := range v.Findings {
		if judge.Blocks(f.Severity, g.BlockOn) {
			blocking = append(blocking, f)
		} else {
			other = append(other, f)
		}
	}
	missing := v.Unimplemented()
	model := fmt.Sprintf("the %s model (%s via %s)", role, call.Model, call.Transport)
	if len(missing) == 0 && len(v.Findings) == 0 {
		detail := model + " found nothing to report"
		if kind == judge.KindRequirements {
			detail = model + " judged every requirement implemented:\n" + judgedList(in, v.Requirements)
		}
		return verdict{detail: detail, log: log}
	}
	fail := len(missing) > 0 || len(blocking) > 0
	var parts, reasons []string
	if len(missing) > 0 {
		ids := make([]string, len(missing))
		for i, j := range missing {
			ids[i] = j.ID
		}
		reasons = append(reasons, "not implemented: "+strings.Join(ids, ", "))
		parts = append(parts, fmt.Sprintf("judged %d of the change's %d requirements not implemented:\n%s",
			len(missing), len(v.Requirements), judgedList(in, missing)))
	}
	n := 0
	list := func(fs []judge.Finding) string {
		var b strings.Builder
		for _, f := range fs {
			n++
			b.WriteString("\n" + findingText(n, f))
		}
		return b.String()
	}
	if len(blocking) > 0 {
		reasons = append(reasons, fmt.Sprintf("%s of severity %s or worse (first: %s)", english.Plural(len(blocking), "finding"), g.BlockOn, brief(blocking[0])))
		parts = append(parts, fmt.Sprintf("reported %s of severity %s or worse, which block the change:\n%s",
			english.Plural(len(blocking), "finding"), g.BlockOn, list(blocking)))
	}
	if len(other) > 0 {
		if !fail {
			reasons = append(reasons, fmt.Sprintf("%s below the blocking severity %s (first: %s)", english.Plural(len(other), "finding"), g.BlockOn, brief(other[0])))
		}
		parts = append(parts, fmt.Sprintf("reported %s below the blocking severity %s:\n%s",
			english.Plural(len(other), "finding"), g.BlockOn, list(other)))
	}
	var b strings.Builder
	if fail {
		fmt.Fprintf(&b, "Gate %s failed: %s %s", in.Step.Gate, model, parts[0])
	} else {
		fmt.Fprintf(&b, "Gate %s passed with findings: %s %s", in.Step.Gate, model, parts[0])
	}
	for _, p := range parts[1:] {
		b.WriteString("\nIt also " + p)
	}
	switch {
	case len(missing) > 0 && len(blocking) > 0:
		b.WriteString("\nImplement each requirement as its text and every one of its scenarios say, and fix the blocking findings.")
	case len(missing) > 0:
		b.WriteString("\nImplement each requirement as its text and every one of its scenarios say.")
	case fail:
		b.WriteString("\nFix the blocking findings.")
	}
	return verdict{
		fail:   fail,
		warn:   !fail,
		reason: strings.Join(reasons, "; "),
		retry:  strings.TrimRight(b.String(), "\n"),
		log:    log,
	}
}

// judgedList lists requirement judgements with their titles and reasons.
func judgedList(in Input, js []judge.Judgement) string {
	items := make([]string, len(js))
	for i, j := range js {
		items[i] = j.ID
		for _, r := range in.Reqs {
			if r.ID == j.ID && r.Title != "" {
				items[i] += ": " + r.Title
				break
			}
		}
		if j.Reason != "" {
			items[i] += " — " + oneLine(j.Reason)
		}
	}
	return bullets(items)
}

// findingText is the nth finding as the agent reads it.
func findingText(n int, f judge.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d. [%s] %s", n, f.Severity, place(f))
	if len(f.Requirements) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(f.Requirements, ", "))
	}
	fmt.Fprintf(&b, "\n   %s\n   Fix: %s\n", indent(f.Message), indent(f.Fix))
	return b.String()
}

// brief is a finding on one line, for a reason.
func brief(f judge.Finding) string {
	return clip(fmt.Sprintf("[%s] %s: %s", f.Severity, place(f), oneLine(f.Message)), 160)
}

// place is where a finding is: "file:line", "file", or "the change".
func place(f judge.Finding) string {
	switch {
	case f.File != "" && f.Line > 0:
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	case f.File != "":
		return f.File
	}
	return "the change as a whole"
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n   ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
