// Package usage holds what a model call consumes, in the units budgets
// count: tokens. It belongs with the model call (engine/llm) and imports
// nothing of set's, so that every package that counts a call's tokens
// (llm, agent, plan, and journal, whose events record them) can import
// it without importing the others.
package usage

// Tokens counts the tokens of one or more model calls. Its JSON is the
// tokens object of the AGENT_ITERATION and LLM_CALL events.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead,omitempty"`
	CacheWrite int64 `json:"cacheWrite,omitempty"`
}

// Total is every token counted against a budget.
func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

// Add returns the sum of t and u.
func (t Tokens) Add(u Tokens) Tokens {
	return Tokens{t.Input + u.Input, t.Output + u.Output, t.CacheRead + u.CacheRead, t.CacheWrite + u.CacheWrite}
}
