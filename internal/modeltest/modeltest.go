// Package modeltest is a scripted model endpoint for tests: an HTTP server
// on 127.0.0.1 that speaks enough of the Anthropic Messages API
// (POST /v1/messages, streaming and not) and of the OpenAI Responses API
// (POST /v1/responses, streaming and not) for the official Go SDKs and for
// the real Claude Code and Codex CLIs. Each model request takes the next
// Step of the test's script: an answer (text, a structured JSON answer,
// tool calls), an HTTP error (529, 429, model not found) or a hang.
//
// Invariants:
//   - steps are taken in order, one per model request, whatever the
//     request's model or API; a request beyond the script is answered
//     with a 400 invalid_request_error naming the request and recorded as
//     a script error (Err);
//   - every model request is recorded (Requests), with its body, before
//     it is answered;
//   - any other path is answered 200 "{}", as the CLIs' start-up probes
//     expect;
//   - a streamed answer closes the connection after its last event.
package modeltest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Step is the answer to one model request.
type Step struct {
	// Status, when neither 0 nor 200, answers with that HTTP status and an
	// error body made of ErrorType and ErrorMessage in the API's shape.
	Status       int
	ErrorType    string
	ErrorMessage string
	// ErrorCode is the OpenAI error's code ("model_not_found"); the
	// Anthropic shape has none.
	ErrorCode string
	// Hang answers nothing until the client gives up or the server
	// closes.
	Hang bool
	// Text is the assistant's text.
	Text string
	// JSON is a structured answer: for the Anthropic API, a tool_use of
	// the tool the request forces (tool_choice), or of its only tool;
	// for the OpenAI API, the output text. It must be valid JSON unless
	// the test means an invalid answer.
	JSON string
	// Tools are tool calls the assistant makes (the turn ends with
	// stop_reason tool_use, or with function calls for OpenAI).
	Tools []ToolCall
	// Usage is what the answer reports; a zero Usage reports 10 input and
	// 5 output tokens.
	Usage Usage
}

// ToolCall is one tool call of an answer.
type ToolCall struct {
	// Name is the tool: for Claude Code e.g. "Write" ({file_path,
	// content}); for Codex "exec_command" ({cmd, workdir}) or
	// "apply_patch" (custom, Patch).
	Name string
	// Input is the call's JSON arguments.
	Input string
	// Patch, for a custom tool such as Codex's apply_patch, is its free
	// text input (Input is then ignored).
	Patch string
}

// Usage is the token usage an answer reports.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64
}

// Request is one model request the server received.
type Request struct {
	API    string // "anthropic" or "openai"
	Path   string // with the query
	Model  string
	Stream bool
	Body   json.RawMessage
	// Header holds the request's headers (x-api-key, authorization).
	Header http.Header
}

// Answer builds a JSON answer step.
func Answer(json string, u Usage) Step { return Step{JSON: json, Usage: u} }

// Overloaded is the Anthropic API's 529 overloaded_error.
func Overloaded() Step {
	return Step{Status: 529, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"}
}

// RateLimited is a 429 rate_limit_error.
func RateLimited() Step {
	return Step{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: "rate limited", ErrorCode: "rate_limit_exceeded"}
}

// ModelNotFound is the answer both APIs give for a model they do not
// serve (unknown or retired), naming the model the request asked for: a
// 404 not_found_error "model: ID" from Anthropic, a 404
// invalid_request_error with code model_not_found ("The model `ID` does
// not exist or you do not have access to it.") from OpenAI.
func ModelNotFound() Step {
	return Step{Status: 404, ErrorCode: "model_not_found"}
}

// Server is a scripted model endpoint.
type Server struct {
	// URL is the server's base, "http://127.0.0.1:PORT"; the Anthropic
	// SDK and Claude Code take it as is, the OpenAI SDK and Codex with
	// "/v1" appended.
	URL string

	srv  *http.Server
	ln   net.Listener
	stop chan struct{}

	mu       sync.Mutex
	steps    []Step
	next     int
	requests []Request
	errs     []string
}

// New starts a server answering with steps, closed when t ends.
func New(t testing.TB, steps ...Step) *Server {
	t.Helper()
	s, err := Start(steps...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts a server answering with steps, for a caller without a
// testing.TB (a testscript command); the caller closes it.
func Start(steps ...Step) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, steps: steps, stop: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve)}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server; hanging answers end.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.stop:
		s.mu.Unlock()
		return
	default:
		close(s.stop)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.srv.Shutdown(ctx)
	_ = s.srv.Close()
}

// Add appends steps to the script.
func (s *Server) Add(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, steps...)
}

// Requests are the model requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Models are the models of the requests received so far, in order.
func (s *Server) Models() []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, r.Model)
	}
	return out
}

// Err reports requests the script had no step for, and steps it could
// not serve.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) == 0 {
		return nil
	}
	return fmt.Errorf("modeltest: %s", strings.Join(s.errs, "; "))
}

// Left is the number of steps not taken yet.
func (s *Server) Left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.steps) - s.next
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var api string
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages"):
		api = "anthropic"
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
		api = "openai"
	default:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var head struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	_ = json.Unmarshal(body, &head)
	req := Request{API: api, Path: r.URL.RequestURI(), Model: head.Model, Stream: head.Stream, Body: body, Header: r.Header.Clone()}

	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	var step Step
	ok := s.next < len(s.steps)
	if ok {
		step = s.steps[s.next]
		s.next++
	} else {
		s.errs = append(s.errs, fmt.Sprintf("request %d (%s %s, model %s) has no step", n, api, req.Path, req.Model))
	}
	s.mu.Unlock()

	if !ok {
		step = Step{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: fmt.Sprintf("modeltest: the script has no step for request %d", n)}
	}
	switch {
	case step.Hang:
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	case step.Status != 0 && step.Status != http.StatusOK:
		writeError(w, req, step)
		return
	}
	var answerErr error
	switch api {
	case "anthropic":
		answerErr = answerAnthropic(w, req, step, n)
	case "openai":
		answerErr = answerOpenAI(w, req, step, n)
	}
	if answerErr != nil {
		s.mu.Lock()
		s.errs = append(s.errs, fmt.Sprintf("request %d: %v", n, answerErr))
		s.mu.Unlock()
	}
}

// writeError answers with the step's HTTP error in the API's shape.
func writeError(w http.ResponseWriter, req Request, step Step) {
	if step.ErrorCode == "model_not_found" && step.ErrorType == "" {
		if req.API == "anthropic" {
			step.ErrorType, step.ErrorMessage = "not_found_error", "model: "+req.Model
		} else {
			step.ErrorType = "invalid_request_error"
			step.ErrorMessage = "The model `" + req.Model + "` does not exist or you do not have access to it."
		}
	}
	var body any
	if req.API == "anthropic" {
		body = map[string]any{"type": "error", "error": map[string]any{"type": step.ErrorType, "message": step.ErrorMessage}}
	} else {
		body = map[string]any{"error": map[string]any{"type": step.ErrorType, "message": step.ErrorMessage, "code": nilIfEmpty(step.ErrorCode), "param": nil}}
	}
	w.Header().Set("Content-Type", "application/json")
	// No retry-after: clients back off by their own schedule.
	w.Header().Set("Connection", "close")
	w.WriteHeader(step.Status)
	_ = json.NewEncoder(w).Encode(body)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func usageOr(u Usage) Usage {
	if u == (Usage{}) {
		return Usage{Input: 10, Output: 5}
	}
	return u
}

// sse writes server-sent events and closes the connection after the last.
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w}
}

func (s *sse) event(name string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}
