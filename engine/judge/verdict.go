package judge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Kinds of verdict: a review's findings, or spec_verify's judgement of
// each requirement with findings.
const (
	KindReview       = "review"
	KindRequirements = "spec_verify"
)

// Severities of a finding, most severe first.
var Severities = []string{"critical", "high", "medium", "low"}

// Blocks reports whether a finding of severity blocks a gate whose blockOn
// is blockOn: it does when it is as severe or more.
func Blocks(severity, blockOn string) bool {
	s, b := slices.Index(Severities, severity), slices.Index(Severities, blockOn)
	return s >= 0 && b >= 0 && s <= b
}

// Finding is one problem the model found in the change.
type Finding struct {
	Severity string `json:"severity"`
	// File and Line are where, in the changed tree; "" and 0 when the
	// finding concerns no one place.
	File string `json:"file"`
	Line int    `json:"line"`
	// Requirements are the IDs of the change's requirements it concerns.
	Requirements []string `json:"requirements"`
	Message      string   `json:"message"`
	// Fix says what to do about it.
	Fix string `json:"fix"`
}

// Judgement is spec_verify's verdict on one requirement.
type Judgement struct {
	ID          string `json:"id"`
	Implemented bool   `json:"implemented"`
	// Reason is why: for a requirement not implemented, what is missing.
	Reason string `json:"reason"`
}

// Verdict is a model's checked answer (baseline.Verdict is a gate's
// judgement of main, another thing).
type Verdict struct {
	Findings []Finding `json:"findings"`
	// Requirements holds one judgement per requirement of the change, in
	// the change's order; only for KindRequirements.
	Requirements []Judgement `json:"requirements,omitempty"`
}

// Unimplemented are the requirements judged not implemented.
func (v Verdict) Unimplemented() []Judgement {
	var out []Judgement
	for _, j := range v.Requirements {
		if !j.Implemented {
			out = append(out, j)
		}
	}
	return out
}

const findingSchema = `{
      "type": "object",
      "additionalProperties": false,
      "required": ["severity", "file", "line", "requirements", "message", "fix"],
      "properties": {
        "severity": {"type": "string", "enum": ["critical", "high", "medium", "low"]},
        "file": {"type": "string", "description": "the file's path in the repository; empty when the finding concerns no one file"},
        "line": {"type": "integer", "minimum": 0, "description": "the line in the changed file; 0 when none"},
        "requirements": {"type": "array", "items": {"type": "string"}, "description": "IDs of the change's requirements the finding concerns"},
        "message": {"type": "string", "description": "what is wrong"},
        "fix": {"type": "string", "description": "what to do about it, concretely"}
      }
    }`

// Every property is required and no other is allowed, so that the schema
// is accepted by every transport's structured output (OpenAI's strict
// mode and Codex's --output-schema require that).
var schemas = map[string]string{
	KindReview: `{
  "type": "object",
  "additionalProperties": false,
  "required": ["findings"],
  "properties": {
    "findings": {"type": "array", "items": ` + findingSchema + `}
  }
}`,
	KindRequirements: `{
  "type": "object",
  "additionalProperties": false,
  "required": ["requirements", "findings"],
  "properties": {
    "requirements": {"type": "array", "items": {
      "type": "object",
      "additionalProperties": false,
      "required": ["id", "implemented", "reason"],
      "properties": {
        "id": {"type": "string", "description": "the requirement's ID"},
        "implemented": {"type": "boolean", "description": "whether the change, with what the repository had, implements the requirement and its scenarios"},
        "reason": {"type": "string", "description": "why; when not implemented, what is missing"}
      }
    }},
    "findings": {"type": "array", "items": ` + findingSchema + `}
  }
}`,
}

// Schema is the JSON Schema of a verdict of kind.
func Schema(kind string) json.RawMessage { return json.RawMessage(schemas[kind]) }

// System is the system prompt of a verdict of kind: what the answer means.
// The gate's prompt template says what to judge.
func System(kind string) string {
	findings := "Each finding has a severity — critical: the change must not be merged as it is (a requirement or scenario not met, a bug, a security hole, data loss, a broken build or test); " +
		"high: a serious problem to fix before merging; medium: worth fixing; low: a detail — " +
		"the file (its path in the repository, \"\" for none) and line (in the changed file, 0 for none) it is about, the IDs of the change's requirements it concerns ([] for none), " +
		"a message saying what is wrong and a fix saying concretely what to do. Report real problems only; no findings is an empty list."
	if kind == KindRequirements {
		return "You are a gate of set, a pipeline that merges a change into the main branch only when its gates pass. " +
			"You judge whether a change implements its requirements. Answer with JSON only, as the schema says: " +
			"requirements lists every requirement ID of the change once, with implemented true or false and the reason (for false, what is missing); " +
			"findings lists other problems. " + findings
	}
	return "You are a gate of set, a pipeline that merges a change into the main branch only when its gates pass. " +
		"You review a change a coding agent made. Answer with JSON only, as the schema says: findings lists the problems you find. " + findings
}

// Decode checks a model's answer against the verdict schema of kind and
// against the change's requirement IDs, and returns the verdict, or every
// problem found (each naming its place in the answer, e.g.
// "findings[0].severity: …").
func Decode(kind, answer string, ids []string) (Verdict, []string) {
	c := checker{ids: ids}
	root, ok := c.object("", []byte(stripFence(answer)), map[string]bool{"findings": true, "requirements": kind == KindRequirements})
	if !ok {
		return Verdict{}, c.problems
	}
	var v Verdict
	for i, raw := range c.array("findings", root["findings"]) {
		if f, ok := c.finding(fmt.Sprintf("findings[%d]", i), raw); ok {
			v.Findings = append(v.Findings, f)
		}
	}
	if kind == KindRequirements {
		seen := map[string]bool{}
		for i, raw := range c.array("requirements", root["requirements"]) {
			j, ok := c.judgement(fmt.Sprintf("requirements[%d]", i), raw)
			switch {
			case !ok:
			case seen[j.ID]:
				c.add(fmt.Sprintf("requirements[%d].id", i), "%s is judged twice", j.ID)
			default:
				seen[j.ID] = true
				v.Requirements = append(v.Requirements, j)
			}
		}
		if _, present := root["requirements"]; present {
			for _, id := range ids {
				if !seen[id] {
					c.add("requirements", "%s is not judged: give every requirement of the change a judgement", id)
				}
			}
		}
		slices.SortStableFunc(v.Requirements, func(a, b Judgement) int {
			return slices.Index(ids, a.ID) - slices.Index(ids, b.ID)
		})
	}
	if len(c.problems) > 0 {
		return Verdict{}, c.problems
	}
	return v, nil
}

// stripFence removes a Markdown code fence around a JSON answer, which a
// model may add even when asked for JSON only.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 && strings.HasSuffix(rest, "```") {
			return strings.TrimSpace(rest[nl+1 : len(rest)-3])
		}
	}
	return s
}

// checker collects the problems of one answer, as judge reads it (not a
// load.Checker, which checks a JSON document against the schema).
type checker struct {
	ids      []string
	problems []string
}

func (c *checker) add(path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	c.problems = append(c.problems, msg)
}

// object decodes raw as a JSON object whose keys are exactly those of
// fields: each required (true) one present, no other.
func (c *checker) object(path string, raw []byte, fields map[string]bool) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		what := "the answer"
		if path != "" {
			what = "the value"
		}
		c.add(path, "%s is not a JSON object: %s", what, clip(strings.TrimSpace(string(raw)), 80))
		return nil, false
	}
	ok := true
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !fields[k] {
			c.add(join(path, k), "unknown field (allowed: %s)", strings.Join(allowed(fields), ", "))
			ok = false
		}
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if _, present := m[k]; fields[k] && !present {
			c.add(join(path, k), "missing")
			ok = false
		}
	}
	return m, ok
}

func allowed(fields map[string]bool) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if fields[k] {
			out = append(out, k)
		}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (c *checker) array(path string, raw json.RawMessage) []json.RawMessage {
	if raw == nil {
		return nil
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		c.add(path, "want a list, got %s", clip(string(raw), 80))
		return nil
	}
	return out
}

// value decodes raw into dst, a string, int, bool or []string.
func (c *checker) value(path string, raw json.RawMessage, dst any, want string) bool {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) || json.Unmarshal(raw, dst) != nil {
		c.add(path, "want %s, got %s", want, clip(string(raw), 80))
		return false
	}
	return true
}

var findingFields = map[string]bool{"severity": true, "file": true, "line": true, "requirements": true, "message": true, "fix": true}

func (c *checker) finding(path string, raw json.RawMessage) (Finding, bool) {
	m, ok := c.object(path, raw, findingFields)
	if !ok {
		return Finding{}, false
	}
	var f Finding
	ok = c.value(path+".severity", m["severity"], &f.Severity, "a string") &&
		c.value(path+".file", m["file"], &f.File, "a string") &&
		c.value(path+".line", m["line"], &f.Line, "an integer") &&
		c.value(path+".requirements", m["requirements"], &f.Requirements, "a list of strings") &&
		c.value(path+".message", m["message"], &f.Message, "a string") &&
		c.value(path+".fix", m["fix"], &f.Fix, "a string")
	if !ok {
		return Finding{}, false
	}
	n := len(c.problems)
	if !slices.Contains(Severities, f.Severity) {
		c.add(path+".severity", "%q is not one of %s", f.Severity, strings.Join(Severities, ", "))
	}
	if f.Line < 0 {
		c.add(path+".line", "%d is negative (0 means no line)", f.Line)
	}
	for _, id := range f.Requirements {
		if !slices.Contains(c.ids, id) {
			c.add(path+".requirements", "%s is not a requirement of the change (%s)", id, c.idList())
		}
	}
	if strings.TrimSpace(f.Message) == "" {
		c.add(path+".message", "empty: say what is wrong")
	}
	if strings.TrimSpace(f.Fix) == "" {
		c.add(path+".fix", "empty: say what to do")
	}
	f.File = strings.TrimPrefix(f.File, "./")
	return f, len(c.problems) == n
}

var judgementFields = map[string]bool{"id": true, "implemented": true, "reason": true}

func (c *checker) judgement(path string, raw json.RawMessage) (Judgement, bool) {
	m, ok := c.object(path, raw, judgementFields)
	if !ok {
		return Judgement{}, false
	}
	var j Judgement
	if !c.value(path+".id", m["id"], &j.ID, "a string") ||
		!c.value(path+".implemented", m["implemented"], &j.Implemented, "true or false") ||
		!c.value(path+".reason", m["reason"], &j.Reason, "a string") {
		return Judgement{}, false
	}
	n := len(c.problems)
	if !slices.Contains(c.ids, j.ID) {
		c.add(path+".id", "%s is not a requirement of the change (%s)", j.ID, c.idList())
	}
	if !j.Implemented && strings.TrimSpace(j.Reason) == "" {
		c.add(path+".reason", "empty: say what is missing")
	}
	return j, len(c.problems) == n
}

func (c *checker) idList() string {
	if len(c.ids) == 0 {
		return "it has none"
	}
	return "its requirements: " + strings.Join(c.ids, ", ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
