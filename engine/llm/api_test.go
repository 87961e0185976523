package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/llm/usage"
	"github.com/set-engine/set/internal/modeltest"
)

// planSchema is a small answer schema, as a planner's would be.
const planSchema = `{"type":"object","properties":{"changes":{"type":"array","items":{"type":"string"}}},"required":["changes"]}`

// recorder keeps the calls a Client reports.
type recorder struct {
	mu    sync.Mutex
	calls []Call
}

func (r *recorder) add(c Call) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	return nil
}

func (r *recorder) events() []journal.LLMCallData {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []journal.LLMCallData
	for _, c := range r.calls {
		e := c.Event()
		e.DurationMS = 0 // varies
		out = append(out, e)
	}
	return out
}

// apiEnv is the environment of the SDK transports for srv: dummy keys
// and srv as both base URLs.
func apiEnv(srv *modeltest.Server) []string {
	return []string{
		"ANTHROPIC_API_KEY=sk-ant-test-dummy", "ANTHROPIC_BASE_URL=" + srv.URL,
		"OPENAI_API_KEY=sk-test-dummy", "OPENAI_BASE_URL=" + srv.URL + "/v1",
	}
}

// newClient is a client for srv with route for the plan role, no waiting
// between retries, and its calls recorded.
func newClient(srv *modeltest.Server, rec *recorder, route ...Target) *Client {
	return New(Config{
		Routes:  map[Role]Route{Plan: route},
		Env:     apiEnv(srv),
		Retries: -1,
		Wait:    func(context.Context, time.Duration) error { return nil },
		OnCall:  rec.add,
	})
}

func planRequest() Request {
	return Request{Role: Plan, System: "You plan.", Prompt: "Plan the spec.", Schema: json.RawMessage(planSchema)}
}

func TestAPIStructuredAnswer(t *testing.T) {
	for _, transport := range []string{TransportAnthropic, TransportOpenAI} {
		t.Run(transport, func(t *testing.T) {
			srv := modeltest.New(t, modeltest.Answer(`{"changes":["add-links"]}`, modeltest.Usage{Input: 120, Output: 30, CacheRead: 40, CacheWrite: 8}))
			rec := &recorder{}
			c := newClient(srv, rec, Target{Transport: transport, Model: "m-primary", Field: "project.agent.models.plan"})
			ans, err := c.Ask(context.Background(), planRequest())
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ Changes []string }
			if err := json.Unmarshal([]byte(ans.Text), &got); err != nil || len(got.Changes) != 1 || got.Changes[0] != "add-links" {
				t.Fatalf("answer %q: %v", ans.Text, err)
			}
			want := usage.Tokens{Input: 120, Output: 30, CacheRead: 40, CacheWrite: 8}
			if transport == TransportOpenAI {
				want.CacheWrite = 0 // the Responses API reports cache reads only
			}
			wantEvents := []journal.LLMCallData{{Role: "plan", Model: "m-primary", Transport: transport, Tokens: want}}
			if got := rec.events(); !equalEvents(got, wantEvents) {
				t.Errorf("events:\n got %+v\nwant %+v", got, wantEvents)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			body := string(reqs[0].Body)
			switch transport {
			case TransportAnthropic:
				// The answer is forced through a tool whose input schema is
				// the request's schema.
				for _, s := range []string{`"tool_choice":{"name":"answer","type":"tool"}`, `"required":["changes"]`, `"system":[{"text":"You plan.","type":"text"}]`} {
					if !strings.Contains(body, s) {
						t.Errorf("request lacks %s:\n%s", s, body)
					}
				}
				if !reqs[0].Stream || reqs[0].Header.Get("X-Api-Key") != "sk-ant-test-dummy" {
					t.Errorf("stream %v, key %q", reqs[0].Stream, reqs[0].Header.Get("X-Api-Key"))
				}
			case TransportOpenAI:
				for _, s := range []string{`"type":"json_schema"`, `"name":"answer"`, `"instructions":"You plan."`} {
					if !strings.Contains(body, s) {
						t.Errorf("request lacks %s:\n%s", s, body)
					}
				}
				if reqs[0].Header.Get("Authorization") != "Bearer sk-test-dummy" {
					t.Errorf("authorization %q", reqs[0].Header.Get("Authorization"))
				}
			}
			if err := srv.Err(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestAPITextAnswer(t *testing.T) {
	for _, transport := range []string{TransportAnthropic, TransportOpenAI} {
		t.Run(transport, func(t *testing.T) {
			srv := modeltest.New(t, modeltest.Step{Text: "no findings"})
			c := newClient(srv, &recorder{}, Target{Transport: transport, Model: "m"})
			ans, err := c.Ask(context.Background(), Request{Role: Plan, Prompt: "Review."})
			if err != nil || ans.Text != "no findings" {
				t.Fatalf("answer %q, %v", ans.Text, err)
			}
		})
	}
}

// An answer that does not satisfy the schema is handed back as it came:
// validating it is the caller's job (a planner repairs it). Both APIs
// always send well-formed JSON for a structured answer.
func TestAPIInvalidAnswerIsReturned(t *testing.T) {
	for _, transport := range []string{TransportAnthropic, TransportOpenAI} {
		t.Run(transport, func(t *testing.T) {
			srv := modeltest.New(t, modeltest.Answer(`{"changes":"add-links"}`, modeltest.Usage{}))
			c := newClient(srv, &recorder{}, Target{Transport: transport, Model: "m"})
			ans, err := c.Ask(context.Background(), planRequest())
			if err != nil {
				t.Fatal(err)
			}
			if ans.Text != `{"changes":"add-links"}` {
				t.Errorf("answer %q, want the model's JSON as it came", ans.Text)
			}
		})
	}
}

// A 529 or 429 on the primary model sends the call to the fallback; each
// attempt is an event, the failed one with its error.
func TestAPIFallbackOnTransientError(t *testing.T) {
	for _, tc := range []struct {
		transport string
		fail      modeltest.Step
		errText   string
	}{
		{TransportAnthropic, modeltest.Overloaded(), "anthropic API: 529 overloaded_error: Overloaded"},
		{TransportOpenAI, modeltest.RateLimited(), "openai API: 429 rate_limit_error: rate limited"},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			srv := modeltest.New(t, tc.fail, modeltest.Answer(`{"changes":[]}`, modeltest.Usage{Input: 9, Output: 2}))
			rec := &recorder{}
			c := newClient(srv, rec,
				Target{Transport: tc.transport, Model: "m-primary"},
				Target{Transport: tc.transport, Model: "m-fallback"})
			ans, err := c.Ask(context.Background(), planRequest())
			if err != nil {
				t.Fatal(err)
			}
			if ans.Call.Model != "m-fallback" {
				t.Errorf("answered by %s", ans.Call.Model)
			}
			if got := strings.Join(srv.Models(), " "); got != "m-primary m-fallback" {
				t.Errorf("models asked: %s", got)
			}
			want := []journal.LLMCallData{
				{Role: "plan", Model: "m-primary", Transport: tc.transport, Error: tc.errText},
				{Role: "plan", Model: "m-fallback", Transport: tc.transport, Tokens: usage.Tokens{Input: 9, Output: 2}},
			}
			if got := rec.events(); !equalEvents(got, want) {
				t.Errorf("events:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// A transient failure is retried on the same model, with a growing wait,
// before the route moves on.
func TestAPIRetriesBeforeFallback(t *testing.T) {
	srv := modeltest.New(t, modeltest.Overloaded(), modeltest.Overloaded(), modeltest.Overloaded(),
		modeltest.Answer(`{"changes":[]}`, modeltest.Usage{}))
	var waits []time.Duration
	c := New(Config{
		Routes: map[Role]Route{Plan: {{Transport: TransportAnthropic, Model: "a"}, {Transport: TransportAnthropic, Model: "b"}}},
		Env:    apiEnv(srv), Retries: 1,
		Wait: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil },
	})
	if _, err := c.Ask(context.Background(), planRequest()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(srv.Models(), " "); got != "a a b b" {
		t.Errorf("models asked: %s", got)
	}
	if len(waits) != 2 || waits[0] != 2*time.Second || waits[1] != 2*time.Second {
		t.Errorf("waits %v, want a 2s backoff before each retry", waits)
	}
}

// Every model of the route failing transiently fails the call with the
// last failure.
func TestAPIEveryModelFails(t *testing.T) {
	srv := modeltest.New(t, modeltest.Overloaded(), modeltest.Overloaded())
	c := newClient(srv, &recorder{}, Target{Transport: TransportAnthropic, Model: "a"}, Target{Transport: TransportAnthropic, Model: "b"})
	_, err := c.Ask(context.Background(), planRequest())
	if err == nil || !strings.Contains(err.Error(), "plan call failed on every model of its route") || !strings.Contains(err.Error(), "529") {
		t.Fatalf("err = %v", err)
	}
}

// A missing key is a configuration error, never a reason to fall back.
func TestAPIMissingKeyDoesNotFallBack(t *testing.T) {
	for _, tc := range []struct{ transport, unset, want string }{
		{TransportAnthropic, "ANTHROPIC_API_KEY", "the anthropic transport needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in setctl's environment"},
		{TransportOpenAI, "OPENAI_API_KEY", "the openai transport needs OPENAI_API_KEY in setctl's environment"},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			srv := modeltest.New(t, modeltest.Answer(`{"changes":[]}`, modeltest.Usage{}))
			var env []string
			for _, kv := range apiEnv(srv) {
				if !strings.HasPrefix(kv, tc.unset+"=") {
					env = append(env, kv)
				}
			}
			other := TransportOpenAI
			if tc.transport == TransportOpenAI {
				other = TransportAnthropic
			}
			c := New(Config{Env: env, Routes: map[Role]Route{Plan: {{Transport: tc.transport, Model: "a"}, {Transport: other, Model: "b"}}}})
			_, err := c.Ask(context.Background(), planRequest())
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a ConfigError %q", err, tc.want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests: the fallback was asked", n)
			}
		})
	}
}

// A model the endpoint does not serve is a configuration error naming
// the model and the field to change; the fallback is not asked.
func TestAPIModelNotFound(t *testing.T) {
	for _, transport := range []string{TransportAnthropic, TransportOpenAI} {
		t.Run(transport, func(t *testing.T) {
			srv := modeltest.New(t, modeltest.ModelNotFound(), modeltest.Answer(`{"changes":[]}`, modeltest.Usage{}))
			c := newClient(srv, &recorder{},
				Target{Transport: transport, Model: "claude-opus-4-1", Field: "project.agent.models.plan (set.cue:9:12)"},
				Target{Transport: transport, Model: "b"})
			_, err := c.Ask(context.Background(), planRequest())
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a ConfigError", err)
			}
			detail := "model: claude-opus-4-1"
			if transport == TransportOpenAI {
				detail = "The model `claude-opus-4-1` does not exist or you do not have access to it"
			}
			want := "the endpoint does not serve model claude-opus-4-1 (unknown or retired): " + detail +
				": set project.agent.models.plan (set.cue:9:12) to a model the endpoint serves"
			if err.Error() != want {
				t.Errorf("err:\n got %s\nwant %s", err, want)
			}
			if got := srv.Models(); len(got) != 1 {
				t.Errorf("models asked: %v", got)
			}
		})
	}
}

// An endpoint that never answers is given up on after the timeout, and
// the fallback answers.
func TestAPIHangFallsBack(t *testing.T) {
	for _, transport := range []string{TransportAnthropic, TransportOpenAI} {
		t.Run(transport, func(t *testing.T) {
			srv := modeltest.New(t, modeltest.Step{Hang: true}, modeltest.Answer(`{"changes":[]}`, modeltest.Usage{}))
			rec := &recorder{}
			c := New(Config{
				Routes:  map[Role]Route{Plan: {{Transport: transport, Model: "slow"}, {Transport: transport, Model: "b"}}},
				Env:     apiEnv(srv),
				Timeout: 300 * time.Millisecond, Retries: -1, OnCall: rec.add,
			})
			ans, err := c.Ask(context.Background(), planRequest())
			if err != nil {
				t.Fatal(err)
			}
			if ans.Call.Model != "b" {
				t.Errorf("answered by %s", ans.Call.Model)
			}
			if ev := rec.events(); len(ev) != 2 || !strings.HasPrefix(ev[0].Error, "no answer within 300ms") {
				t.Errorf("events %+v", ev)
			}
		})
	}
}

// A cancelled call ends at once, with no fallback.
func TestAPICancelled(t *testing.T) {
	srv := modeltest.New(t, modeltest.Step{Hang: true}, modeltest.Answer(`{"changes":[]}`, modeltest.Usage{}))
	c := newClient(srv, &recorder{}, Target{Transport: TransportAnthropic, Model: "a"}, Target{Transport: TransportAnthropic, Model: "b"})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(srv.Requests()) == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	_, err := c.Ask(ctx, planRequest())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if got := srv.Models(); len(got) != 1 {
		t.Errorf("models asked: %v", got)
	}
}

func TestNoRoute(t *testing.T) {
	c := New(Config{})
	_, err := c.Ask(context.Background(), Request{Role: Review, Prompt: "x"})
	var ce *ConfigError
	if !errors.As(err, &ce) || err.Error() != "no model is configured for the review role" {
		t.Fatalf("err = %v", err)
	}
}

func equalEvents(got, want []journal.LLMCallData) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}
