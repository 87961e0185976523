package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/engine/proc"
)

// openaiAPI calls the OpenAI Responses API through the official SDK, with
// the key and base URL of the client's environment only (the service is
// built without the SDK's environment look-ups) and without the SDK's
// retries (Client retries).
type openaiAPI struct {
	service responses.ResponseService
}

func newOpenAI(env []string) (*openaiAPI, error) {
	key := proc.Getenv(env, "OPENAI_API_KEY")
	if key == "" {
		return nil, &ConfigError{Reason: "the openai transport needs OPENAI_API_KEY in setctl's environment; or use the codex transport, which uses Codex's own login"}
	}
	base := proc.Getenv(env, "OPENAI_BASE_URL")
	if base == "" {
		base = "https://api.openai.com/v1/"
	}
	return &openaiAPI{service: responses.NewResponseService(
		option.WithBaseURL(base), option.WithAPIKey(key), option.WithMaxRetries(0),
	)}, nil
}

func (o *openaiAPI) call(ctx context.Context, model string, req Request) (result, error) {
	params := responses.ResponseNewParams{
		Model:           model,
		Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String(req.Prompt)},
		MaxOutputTokens: openai.Int(req.MaxTokens),
		Store:           openai.Bool(false),
	}
	if req.System != "" {
		params.Instructions = openai.String(req.System)
	}
	if len(req.Schema) > 0 {
		var schema map[string]any
		if err := json.Unmarshal(req.Schema, &schema); err != nil {
			return result{}, fmt.Errorf("answer schema: %w", err)
		}
		params.Text = responses.ResponseTextConfigParam{
			Format: responses.ResponseFormatTextConfigParamOfJSONSchema("answer", schema),
		}
	}
	resp, err := o.service.New(ctx, params)
	if err != nil {
		return result{model: model}, openaiError(model, err)
	}
	res := result{
		model: resp.Model,
		text:  resp.OutputText(),
		tokens: usage.Tokens{
			// input_tokens includes the cached ones.
			Input:     resp.Usage.InputTokens - resp.Usage.InputTokensDetails.CachedTokens,
			Output:    resp.Usage.OutputTokens,
			CacheRead: resp.Usage.InputTokensDetails.CachedTokens,
		},
	}
	if res.model == "" {
		res.model = model
	}
	if resp.Status == responses.ResponseStatusFailed || resp.Status == responses.ResponseStatusIncomplete {
		return res, fmt.Errorf("openai API: response %s: %s%s", resp.Status, resp.Error.Message, resp.IncompleteDetails.Reason)
	}
	return res, nil
}

// openaiError classifies an error of the SDK.
func openaiError(model string, err error) error {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		return err
	}
	msg := fmt.Errorf("openai API: %d %s: %s", apiErr.StatusCode, apiErr.Type, apiErr.Message)
	kind := apiErr.Type
	if apiErr.Code != "" {
		kind = apiErr.Code
	}
	return classify(model, apiErr.StatusCode, kind, apiErr.Message, msg)
}
