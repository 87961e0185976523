package modeltest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A request beyond the script is answered 400 and reported by Err; other
// paths are answered 200 "{}" and not recorded.
func TestScriptExhaustedAndOtherPaths(t *testing.T) {
	s := New(t, Step{Text: "one"})
	post := func() (int, string) {
		resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","max_tokens":10,"messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(); code != 200 || !strings.Contains(body, `"text":"one"`) {
		t.Errorf("first: %d %s", code, body)
	}
	if s.Err() != nil || s.Left() != 0 {
		t.Errorf("err %v, left %d", s.Err(), s.Left())
	}
	if code, body := post(); code != 400 || !strings.Contains(body, "the script has no step for request 2") {
		t.Errorf("second: %d %s", code, body)
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "request 2 (anthropic /v1/messages, model m) has no step") {
		t.Errorf("Err() = %v", err)
	}
	resp, err := http.Get(s.URL + "/api/hello")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "{}" || len(s.Requests()) != 2 {
		t.Errorf("GET: %d %s, %d requests recorded", resp.StatusCode, b, len(s.Requests()))
	}
}
