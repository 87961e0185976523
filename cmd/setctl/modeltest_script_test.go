package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/set-engine/set/internal/modeltest"
)

// modeltestKey holds a script's modeltest server (env.Values).
type modeltestKey struct{}

// modeltestServer is the scripted model endpoint of one script, if started.
type modeltestServer struct {
	mu  sync.Mutex
	srv *modeltest.Server
}

// modeltestCmd is the script command that runs a scripted model endpoint
// (internal/modeltest) on 127.0.0.1 for the commands of a script:
//
//	modeltest start FILE      start it, answering model requests with
//	                          FILE's steps in order; $MODELTEST_URL is its
//	                          address (for ANTHROPIC_BASE_URL; OPENAI_BASE_URL
//	                          wants $MODELTEST_URL/v1)
//	modeltest done            fail unless every step was taken and no
//	                          request went beyond the script
//	modeltest requests FILE   write the body of every request so far to
//	                          FILE, one JSON object per line
//
// FILE holds one step per line, a JSON object (blank lines and lines
// starting with # are skipped):
//
//	{"answer": VALUE}                 a structured answer: VALUE as JSON, or,
//	                                  when it is a string, the string itself
//	                                  (so "not json" is an invalid answer)
//	{"text": "…"}                     a text answer
//	{"status": 529, "type": "overloaded_error", "message": "Overloaded"}
//	{"status": 404, "code": "model_not_found"}
//	{"hang": true}                    no answer until the client gives up
//
// with, on any answer, "usage": {"input": N, "output": N} and "tools":
// [{"name": …, "input": "…"}] (see modeltest.Step).
func modeltestCmd(ts *testscript.TestScript, neg bool, args []string) {
	state := ts.Value(modeltestKey{}).(*modeltestServer)
	state.mu.Lock()
	defer state.mu.Unlock()
	if len(args) == 0 {
		ts.Fatalf("usage: modeltest start FILE | done | requests FILE")
	}
	if neg && args[0] != "done" {
		ts.Fatalf("modeltest %s cannot be negated", args[0])
	}
	switch {
	case args[0] == "start" && len(args) == 2:
		steps, err := modeltestSteps(ts.ReadFile(args[1]))
		if err != nil {
			ts.Fatalf("%s: %v", args[1], err)
		}
		if state.srv != nil {
			state.srv.Close()
		}
		srv, err := modeltest.Start(steps...)
		ts.Check(err)
		state.srv = srv
		ts.Setenv("MODELTEST_URL", srv.URL)
	case state.srv == nil:
		ts.Fatalf("modeltest %s: no server; run modeltest start FILE first", args[0])
	case args[0] == "done" && len(args) == 1:
		err := state.srv.Err()
		if err == nil && state.srv.Left() > 0 {
			err = fmt.Errorf("%d steps of the script were not taken", state.srv.Left())
		}
		switch {
		case err != nil && !neg:
			ts.Fatalf("%v", err)
		case err == nil && neg:
			ts.Fatalf("every step was taken, and no request went beyond the script")
		}
	case args[0] == "requests" && len(args) == 2:
		var b bytes.Buffer
		for _, r := range state.srv.Requests() {
			b.Write(bytes.TrimSpace(r.Body))
			b.WriteByte('\n')
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), b.Bytes(), 0o644))
	default:
		ts.Fatalf("usage: modeltest start FILE | done | requests FILE")
	}
}

// modeltestSteps reads a modeltest script file (see modeltestCmd).
func modeltestSteps(text string) ([]modeltest.Step, error) {
	var steps []modeltest.Step
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var s struct {
			Answer  json.RawMessage      `json:"answer"`
			Text    string               `json:"text"`
			Status  int                  `json:"status"`
			Type    string               `json:"type"`
			Message string               `json:"message"`
			Code    string               `json:"code"`
			Hang    bool                 `json:"hang"`
			Usage   modeltest.Usage      `json:"usage"`
			Tools   []modeltest.ToolCall `json:"tools"`
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		step := modeltest.Step{
			Text: s.Text, Status: s.Status, ErrorType: s.Type, ErrorMessage: s.Message, ErrorCode: s.Code,
			Hang: s.Hang, Usage: s.Usage, Tools: s.Tools,
		}
		if len(s.Answer) > 0 {
			var str string
			if json.Unmarshal(s.Answer, &str) == nil {
				step.JSON = str
			} else {
				step.JSON = string(s.Answer)
			}
		}
		steps = append(steps, step)
	}
	return steps, sc.Err()
}
