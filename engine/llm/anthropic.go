package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/proc"
)

// answerTool is the tool a structured answer is forced through on the
// Anthropic API: its input schema is the request's schema.
const answerTool = "answer"

// anthropicAPI calls the Anthropic Messages API through the official SDK,
// streaming (the SDK refuses long non-streaming calls), with the key and
// base URL of the client's environment only: the SDK's own environment
// and profile look-ups are off, and its retries too (Client retries).
type anthropicAPI struct {
	client anthropic.Client
}

func newAnthropic(env []string) (*anthropicAPI, error) {
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithMaxRetries(0)}
	switch {
	case proc.Getenv(env, "ANTHROPIC_API_KEY") != "":
		opts = append(opts, option.WithAPIKey(proc.Getenv(env, "ANTHROPIC_API_KEY")))
	case proc.Getenv(env, "ANTHROPIC_AUTH_TOKEN") != "":
		opts = append(opts, option.WithAuthToken(proc.Getenv(env, "ANTHROPIC_AUTH_TOKEN")))
	default:
		return nil, &ConfigError{Reason: "the anthropic transport needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in setctl's environment; or use the claude transport, which uses Claude Code's own login"}
	}
	if base := proc.Getenv(env, "ANTHROPIC_BASE_URL"); base != "" {
		opts = append(opts, option.WithBaseURL(base))
	}
	return &anthropicAPI{client: anthropic.NewClient(opts...)}, nil
}

func (a *anthropicAPI) call(ctx context.Context, model string, req Request) (result, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(model),
		MaxTokens: req.MaxTokens,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(req.Prompt))},
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	if len(req.Schema) > 0 {
		schema, err := toolSchema(req.Schema)
		if err != nil {
			return result{}, err
		}
		tool := anthropic.ToolUnionParamOfTool(schema, answerTool)
		tool.OfTool.Description = anthropic.String("Give your answer: its input is the answer.")
		params.Tools = []anthropic.ToolUnionParam{tool}
		params.ToolChoice = anthropic.ToolChoiceParamOfTool(answerTool)
	}
	stream := a.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var msg anthropic.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			return anthropicResult(model, msg), fmt.Errorf("anthropic stream: %w", err)
		}
	}
	res := anthropicResult(model, msg)
	if err := stream.Err(); err != nil {
		return res, anthropicError(model, err)
	}
	var text []string
	for _, block := range msg.Content {
		switch {
		case len(req.Schema) > 0 && block.Type == "tool_use" && block.Name == answerTool:
			res.text = string(block.Input)
			return res, nil
		case block.Type == "text":
			text = append(text, block.Text)
		}
	}
	res.text = strings.Join(text, "")
	return res, nil
}

func anthropicResult(model string, msg anthropic.Message) result {
	res := result{model: string(msg.Model), tokens: usage.Tokens{
		Input:      msg.Usage.InputTokens,
		Output:     msg.Usage.OutputTokens,
		CacheRead:  msg.Usage.CacheReadInputTokens,
		CacheWrite: msg.Usage.CacheCreationInputTokens,
	}}
	if res.model == "" {
		res.model = model
	}
	return res
}

// anthropicError classifies an error of the SDK.
func anthropicError(model string, err error) error {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		// A stream that broke off, a refused connection: the transport's
		// own errors are net errors when they are worth a retry.
		return err
	}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(apiErr.RawJSON()), &body)
	msg := fmt.Errorf("anthropic API: %d %s: %s", apiErr.StatusCode, body.Error.Type, body.Error.Message)
	return classify(model, apiErr.StatusCode, body.Error.Type, body.Error.Message, msg)
}

// toolSchema is an object JSON Schema as the SDK's tool input schema.
func toolSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return anthropic.ToolInputSchemaParam{}, fmt.Errorf("answer schema: %w", err)
	}
	if t, ok := m["type"]; ok && t != "object" {
		return anthropic.ToolInputSchemaParam{}, fmt.Errorf("answer schema: type is %v; a structured answer must be an object", t)
	}
	s := anthropic.ToolInputSchemaParam{Properties: m["properties"], ExtraFields: map[string]any{}}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	for k, v := range m {
		if k != "type" && k != "properties" && k != "required" {
			s.ExtraFields[k] = v
		}
	}
	return s, nil
}
