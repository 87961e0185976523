package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	r := New([]string{
		"ANTHROPIC_API_KEY=sk-ant-planted-secret-123456",
		"MY_TOKEN=planted-token-abcdef",
		"DB_PASSWORD=hunter2hunter2",
		"CLIENT_SECRET=s3cr3t-value!",
		"CI_TOKEN=1",                   // too short to be a secret
		"HOME=/home/someone",           // not a secret name
		"DEPLOY_PHRASE=open-sesame-42", // named in the project's secrets
		"NOT_EQUALS",
	}, []string{"DEPLOY_PHRASE"})
	tests := []struct{ in, want string }{
		{"key sk-ant-planted-secret-123456 end", "key [REDACTED] end"},
		{"MY_TOKEN=planted-token-abcdef", "MY_TOKEN=[REDACTED]"},
		{"pw hunter2hunter2 and s3cr3t-value!", "pw [REDACTED] and [REDACTED]"},
		{"open-sesame-42", "[REDACTED]"},
		{"CI_TOKEN=1 HOME=/home/someone", "CI_TOKEN=1 HOME=/home/someone"},
		// Token shapes, whoever's they are.
		{"sk-ant-api03-abcdefghijkl", "[REDACTED]"},
		{"OPENAI=sk-proj-abcdefghijklmnopqrstuvwx", "OPENAI=[REDACTED]"},
		{"ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"},
		{"github_pat_11ABCDEFG0123456789_abcdefghij", "[REDACTED]"},
		{"aws AKIAIOSFODNN7EXAMPLE.", "aws [REDACTED]."},
		// Look-alikes that are not tokens.
		{"task-abcdefghijklmnopqrstuvwxyz", "task-abcdefghijklmnopqrstuvwxyz"},
		{"sk-short", "sk-short"},
	}
	for _, tt := range tests {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLongestValueFirst(t *testing.T) {
	r := New([]string{"A_KEY=abcdefgh", "B_KEY=abcdefgh-and-more"}, nil)
	if got := r.String("x abcdefgh-and-more y"); got != "x [REDACTED] y" {
		t.Errorf("got %q", got)
	}
}

func TestNilRedactsNothing(t *testing.T) {
	var r *Redactor
	if got := r.String("sk-ant-api03-abcdefghijkl"); got != "sk-ant-api03-abcdefghijkl" {
		t.Errorf("nil String = %q", got)
	}
	var b bytes.Buffer
	w := r.Writer(&b)
	w.Write([]byte("ghp_abcdefghijklmnopqrstuvwxyz0123456789"))
	w.Close()
	if b.String() != "ghp_abcdefghijklmnopqrstuvwxyz0123456789" {
		t.Errorf("nil Writer wrote %q", b.String())
	}
}

func TestJSON(t *testing.T) {
	secret := `quote"back\slash<tag>`
	r := New([]string{"X_SECRET=" + secret}, nil)
	clean := []byte(`{"b":1.50,"a":["x"]}`)
	got, err := r.JSON(clean)
	if err != nil || !bytes.Equal(got, clean) {
		t.Fatalf("JSON(clean) = %s, %v; want the same bytes", got, err)
	}
	data, _ := json.Marshal(map[string]any{"out": "env: " + secret + "\n", "n": 3, "list": []string{secret}})
	got, err = r.JSON(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"list":["[REDACTED]"],"n":3,"out":"env: [REDACTED]\n"}`; string(got) != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
	if _, err := r.JSON([]byte(`{"a":`)); err == nil {
		t.Error("JSON of a torn value: no error")
	}
}

func TestWriterSecretSplitAcrossWrites(t *testing.T) {
	r := New([]string{"MY_TOKEN=planted-token-abcdef"}, nil)
	var b bytes.Buffer
	w := r.Writer(&b)
	for _, p := range []string{"one planted-to", "ken-abcdef\ntwo ", "planted-token-abcdef"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if got := b.String(); got != "one [REDACTED]\n" {
		t.Errorf("before Close: %q", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "one [REDACTED]\ntwo [REDACTED]" {
		t.Errorf("after Close: %q", got)
	}
}

func TestWriterLongLineIsWrittenInPieces(t *testing.T) {
	var b bytes.Buffer
	w := New(nil, nil).Writer(&b)
	w.Write([]byte(strings.Repeat("x", maxLine)))
	if b.Len() != maxLine {
		t.Errorf("a line of maxLine bytes without newline: %d bytes written, want %d", b.Len(), maxLine)
	}
}
