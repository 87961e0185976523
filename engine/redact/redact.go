// Package redact keeps secrets out of what set writes: events, the state,
// logs and prompts. A Redactor replaces the values of the secret
// environment variables of set's own environment, and strings shaped like
// well-known API tokens, with Mask.
package redact

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Mask replaces every secret.
const Mask = "[REDACTED]"

// MinValueLen is the shortest environment value that is redacted: a
// variable that looks secret but holds "1" or "true" is a setting, and
// masking every "1" would make logs unreadable.
const MinValueLen = 8

// shapes are well-known API token formats, redacted wherever they appear.
var shapes = []*regexp.Regexp{
	regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{8,}`),     // Anthropic
	regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`),        // OpenAI and alike
	regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`),   // GitHub tokens
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), // GitHub fine-grained tokens
	regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),  // AWS access key IDs
}

// Redactor replaces secrets with Mask. A nil *Redactor redacts nothing.
// It is safe for concurrent use: it is never modified after New.
type Redactor struct {
	// values are the secret values, longest first, so that a value that
	// contains another is masked whole.
	values []string
}

// SecretName reports whether an environment variable's name looks secret:
// it ends in _KEY, _TOKEN or _SECRET, or contains PASSWORD (in any case).
func SecretName(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasSuffix(n, "_KEY") || strings.HasSuffix(n, "_TOKEN") ||
		strings.HasSuffix(n, "_SECRET") || strings.Contains(n, "PASSWORD")
}

// New returns the Redactor of the environment environ (KEY=VALUE
// entries): it masks the value of every variable whose name looks secret
// (SecretName) or is one of names, when the value is at least MinValueLen
// bytes long, and every string shaped like a well-known token.
func New(environ []string, names []string) *Redactor {
	r := &Redactor{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < MinValueLen || !(SecretName(k) || slices.Contains(names, k)) {
			continue
		}
		r.values = append(r.values, v)
	}
	slices.SortFunc(r.values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	r.values = slices.Compact(r.values)
	return r
}

// String returns s with every secret replaced by Mask.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.values {
		s = strings.ReplaceAll(s, v, Mask)
	}
	for _, re := range shapes {
		s = re.ReplaceAllLiteralString(s, Mask)
	}
	return s
}

// JSON returns the JSON value data with every secret in its strings (keys
// included) replaced by Mask. data comes back unchanged, same bytes, when
// it holds no secret; otherwise it is encoded again, objects with sorted
// keys. Secrets are looked for in the decoded strings, so an escape
// sequence cannot hide one.
func (r *Redactor) JSON(data []byte) ([]byte, error) {
	if r == nil {
		return data, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	v, changed := r.value(v)
	if !changed {
		return data, nil
	}
	return json.Marshal(v)
}

// value redacts the decoded JSON value v.
func (r *Redactor) value(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		s := r.String(v)
		return s, s != v
	case []any:
		changed := false
		for i, e := range v {
			var c bool
			v[i], c = r.value(e)
			changed = changed || c
		}
		return v, changed
	case map[string]any:
		changed := false
		out := make(map[string]any, len(v))
		for k, e := range v {
			e, c := r.value(e)
			rk := r.String(k)
			out[rk] = e
			changed = changed || c || rk != k
		}
		return out, changed
	}
	return v, false
}

// maxLine bounds the bytes a Writer holds while it waits for a newline;
// a longer line is written in pieces, and a secret split between two
// pieces is not found.
const maxLine = 64 << 10

// Writer redacts what is written through it, line by line: a line
// reaches the underlying writer once its newline arrives (or Close is
// called), so a secret written in two pieces is still masked.
//
// A Writer is safe for concurrent use (an agent's stdout and stderr may
// share it). It is an io.Writer; journal.Writer writes events, another
// thing.
type Writer struct {
	r   *Redactor
	w   io.Writer
	mu  sync.Mutex
	buf []byte
}

// Writer returns a Writer that writes to w what it is given, redacted.
// Close it to write the last line when it has no newline.
func (r *Redactor) Writer(w io.Writer) *Writer { return &Writer{r: r, w: w} }

// Write buffers p and writes every complete line, redacted. It reports
// len(p) written unless the underlying writer fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	end := bytes.LastIndexByte(w.buf, '\n') + 1
	if end == 0 && len(w.buf) >= maxLine {
		end = len(w.buf)
	}
	if end == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(w.w, w.r.String(string(w.buf[:end]))); err != nil {
		return 0, err
	}
	w.buf = append(w.buf[:0], w.buf[end:]...)
	return len(p), nil
}

// Close writes what is left of the last line, redacted. It does not
// close the underlying writer.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(w.w, w.r.String(string(w.buf)))
	w.buf = w.buf[:0]
	return err
}
