package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropicRequest is the part of a Messages API request the server reads.
type anthropicRequest struct {
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	ToolChoice struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
}

// answerTool is the tool a structured answer is a tool_use of: the tool
// the request forces, or its only tool, or a tool named
// StructuredOutput (Claude Code's --json-schema); "" answers as text.
func (r anthropicRequest) answerTool() string {
	if r.ToolChoice.Type == "tool" && r.ToolChoice.Name != "" {
		return r.ToolChoice.Name
	}
	if len(r.Tools) == 1 {
		return r.Tools[0].Name
	}
	for _, t := range r.Tools {
		if t.Name == "StructuredOutput" {
			return t.Name
		}
	}
	return ""
}

// anthropicContent is the content blocks of the step's answer to req.
func anthropicContent(req Request, step Step, n int) ([]map[string]any, error) {
	var ar anthropicRequest
	if err := json.Unmarshal(req.Body, &ar); err != nil {
		return nil, fmt.Errorf("anthropic request: %v", err)
	}
	var blocks []map[string]any
	if step.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": step.Text})
	}
	if step.JSON != "" {
		tool := ar.answerTool()
		if tool == "" {
			blocks = append(blocks, map[string]any{"type": "text", "text": step.JSON})
		} else {
			blocks = append(blocks, toolUse(n, len(blocks), tool, step.JSON))
		}
	}
	for _, c := range step.Tools {
		blocks = append(blocks, toolUse(n, len(blocks), c.Name, c.Input))
	}
	return blocks, nil
}

func toolUse(n, i int, name, input string) map[string]any {
	var in any = json.RawMessage(input)
	if !json.Valid([]byte(input)) {
		// An invalid structured answer still travels: as a string.
		in = input
	}
	return map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d_%d", n, i), "name": name, "input": in}
}

func stopReason(blocks []map[string]any) string {
	for _, b := range blocks {
		if b["type"] == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

func anthropicUsage(u Usage) map[string]any {
	return map[string]any{
		"input_tokens":                u.Input,
		"output_tokens":               u.Output,
		"cache_read_input_tokens":     u.CacheRead,
		"cache_creation_input_tokens": u.CacheWrite,
	}
}

// answerAnthropic answers a Messages API request, as SSE when it asked
// for a stream.
func answerAnthropic(w http.ResponseWriter, req Request, step Step, n int) error {
	blocks, err := anthropicContent(req, step, n)
	if err != nil {
		return err
	}
	u := usageOr(step.Usage)
	id := fmt.Sprintf("msg_%02d", n)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		return json.NewEncoder(w).Encode(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": blocks, "stop_reason": stopReason(blocks), "stop_sequence": nil,
			"usage": anthropicUsage(u),
		})
	}
	s := newSSE(w)
	start := anthropicUsage(u)
	start["output_tokens"] = 1
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": start,
	}})
	for i, b := range blocks {
		switch b["type"] {
		case "text":
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			var partial string
			switch in := b["input"].(type) {
			case json.RawMessage:
				partial = string(in)
			case string:
				partial = in
			}
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": partial}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason(blocks), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.Output}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
	return nil
}
