package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// openaiOutput is the output items of the step's answer: tool calls
// first, then one assistant message with the JSON answer or, without
// one, the text.
func openaiOutput(step Step, n int) []map[string]any {
	var items []map[string]any
	for i, c := range step.Tools {
		call := fmt.Sprintf("call_%02d_%d", n, i)
		if c.Patch != "" {
			items = append(items, map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_%02d_%d", n, i),
				"call_id": call, "name": c.Name, "input": c.Patch, "status": "completed"})
			continue
		}
		items = append(items, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%02d_%d", n, i),
			"call_id": call, "name": c.Name, "arguments": c.Input, "status": "completed"})
	}
	text := step.Text
	if step.JSON != "" {
		text = step.JSON
	}
	if text != "" {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_%02d", n), "status": "completed",
			"role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}})
	}
	return items
}

func openaiUsage(u Usage) map[string]any {
	// input_tokens includes the cached tokens, as the API counts them.
	return map[string]any{
		"input_tokens":          u.Input + u.CacheRead,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CacheRead},
		"output_tokens":         u.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          u.Input + u.CacheRead + u.Output,
	}
}

// answerOpenAI answers a Responses API request, as SSE when it asked for
// a stream.
func answerOpenAI(w http.ResponseWriter, req Request, step Step, n int) error {
	items := openaiOutput(step, n)
	resp := map[string]any{
		"id": fmt.Sprintf("resp_%02d", n), "object": "response", "created_at": 0, "status": "completed",
		"model": req.Model, "output": items, "usage": openaiUsage(usageOr(step.Usage)),
		"parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}, "error": nil, "incomplete_details": nil,
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		return json.NewEncoder(w).Encode(resp)
	}
	s := newSSE(w)
	seq := 0
	next := func() int { seq++; return seq }
	created := map[string]any{}
	for k, v := range resp {
		created[k] = v
	}
	created["status"], created["output"] = "in_progress", []any{}
	s.event("response.created", map[string]any{"type": "response.created", "sequence_number": next(), "response": created})
	for i, it := range items {
		s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "sequence_number": next(), "output_index": i, "item": it})
	}
	s.event("response.completed", map[string]any{"type": "response.completed", "sequence_number": next(), "response": resp})
	return nil
}
