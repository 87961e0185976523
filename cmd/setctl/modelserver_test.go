package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/set-engine/set/internal/modeltest"
)

// modelServerKey keys, in a script's Values, the scripted model endpoint
// its modelserver command started (a *modelServerSlot).
type modelServerKey struct{}

type modelServerSlot struct{ srv *modeltest.Server }

// setupModelServer gives a script the slot of its model endpoint, closed
// when the script ends.
func setupModelServer(env *testscript.Env) {
	slot := &modelServerSlot{}
	env.Values[modelServerKey{}] = slot
	env.Defer(func() {
		if slot.srv != nil {
			slot.srv.Close()
		}
	})
}

// modelServer is the script command `modelserver STEP...`: it starts a
// scripted model endpoint on 127.0.0.1 (internal/modeltest) answering one
// step per model request, in order, and points ANTHROPIC_BASE_URL and
// OPENAI_BASE_URL at it (the keys are the script's to set). A STEP is a
// file holding a JSON answer (10 input and 5 output tokens), or
// overloaded (a 529), ratelimited (a 429) or notfound (an unknown model).
// A later modelserver replaces the endpoint.
func modelServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: modelserver STEP...")
	}
	var steps []modeltest.Step
	for _, a := range args {
		switch a {
		case "overloaded":
			steps = append(steps, modeltest.Overloaded())
		case "ratelimited":
			steps = append(steps, modeltest.RateLimited())
		case "notfound":
			steps = append(steps, modeltest.ModelNotFound())
		default:
			steps = append(steps, modeltest.Answer(ts.ReadFile(a), modeltest.Usage{}))
		}
	}
	slot := ts.Value(modelServerKey{}).(*modelServerSlot)
	if slot.srv != nil {
		slot.srv.Close()
	}
	srv, err := modeltest.Start(steps...)
	ts.Check(err)
	slot.srv = srv
	ts.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	ts.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
}

// modelRequests is the script command `modelrequests DIR`: it writes each
// model request the endpoint received to DIR/N.txt (from 1): its model,
// then its instructions and its prompt. It fails when a request found no
// step in the script.
func modelRequests(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: modelrequests DIR")
	}
	slot := ts.Value(modelServerKey{}).(*modelServerSlot)
	if slot.srv == nil {
		ts.Fatalf("no modelserver")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	for i, r := range slot.srv.Requests() {
		var body struct {
			System []struct {
				Text string `json:"text"`
			} `json:"system"`
			Messages []struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"messages"`
			Instructions string `json:"instructions"`
			Input        string `json:"input"`
		}
		ts.Check(json.Unmarshal(r.Body, &body))
		system, prompt := body.Instructions, body.Input
		if len(body.System) > 0 {
			system = body.System[0].Text
		}
		if len(body.Messages) > 0 && len(body.Messages[0].Content) > 0 {
			prompt = body.Messages[0].Content[0].Text
		}
		text := fmt.Sprintf("model: %s\n\n%s\n\n%s", r.Model, system, prompt)
		ts.Check(os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.txt", i+1)), []byte(text), 0o644))
	}
	ts.Check(slot.srv.Err())
}
