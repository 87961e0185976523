package gate

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/english"
)

// maxFailureLine bounds the part of one output line the failures pattern
// sees: a command that prints megabytes without a newline must not make
// the scanner hold them.
const maxFailureLine = 64 << 10

// outputScanner is an io.Writer that reads a gate's output as it streams
// by, line by line (each without its line ending and terminal colour
// codes), for two things:
//   - the command the gate ran: the last line that starts with
//     CommandMarker names it (see Command);
//   - the individual failures, when the gate has a `failures` pattern: every
//     match of the pattern on a line is one failure, named by its non-empty
//     capture groups joined by a space, or by the whole match when it
//     captured nothing. A match that names nothing is ignored.
//
// It holds what it found and at most one partial line, however long the
// output.
type outputScanner struct {
	re      *regexp.Regexp // nil: the gate has no failures pattern
	line    []byte
	found   map[string]bool
	command string
}

func newOutputScanner(re *regexp.Regexp) *outputScanner {
	return &outputScanner{re: re, found: map[string]bool{}}
}

// Write scans the complete lines of p and keeps the rest for the next
// call; it never fails.
func (s *outputScanner) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.keep(p)
			break
		}
		s.keep(p[:i])
		s.scanLine()
		p = p[i+1:]
	}
	return n, nil
}

func (s *outputScanner) keep(p []byte) {
	if room := maxFailureLine - len(s.line); room > 0 {
		s.line = append(s.line, p[:min(len(p), room)]...)
	}
}

func (s *outputScanner) scanLine() {
	line := ansiEscape.ReplaceAllString(strings.TrimRight(string(s.line), "\r"), "")
	s.line = s.line[:0]
	if c, ok := strings.CutPrefix(line, CommandMarker); ok && strings.TrimSpace(c) != "" {
		s.command = clip(strings.TrimSpace(c), maxQuotedLine)
	}
	if s.re == nil {
		return
	}
	for _, name := range FailureNames(s.re, line) {
		s.found[name] = true
	}
}

// FailureNames are the failures a gate's failures pattern re names on
// one line of its output (without its line ending and terminal colour
// codes), in the order they appear: each match is named by its
// non-empty capture groups joined by a space, or by the whole match
// when the pattern has no groups; a match that names nothing is left
// out. It is how a gate's run names the failures it records
// (VERIFY_GATE's failures), and how setctl learn names those of a run
// that recorded none, by the gate's pattern of today.
func FailureNames(re *regexp.Regexp, line string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(line, -1) {
		var parts []string
		for _, g := range m[1:] {
			if g != "" {
				parts = append(parts, g)
			}
		}
		name := strings.TrimSpace(strings.Join(parts, " "))
		if len(m) == 1 {
			name = strings.TrimSpace(m[0])
		}
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}

// end ends the scan: a last line without a newline counts.
func (s *outputScanner) end() {
	if len(s.line) > 0 {
		s.scanLine()
	}
}

// failures ends the scan and returns the failures found, sorted and
// without duplicates: never nil with a pattern, nil without one.
func (s *outputScanner) failures() []string {
	s.end()
	if s.re == nil {
		return nil
	}
	out := make([]string, 0, len(s.found))
	for f := range s.found {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// marked ends the scan and returns the command the last CommandMarker
// line named; "" when no line did.
func (s *outputScanner) marked() string {
	s.end()
	return s.command
}

// NewFailures returns the failures that are not accepted, in the order of
// failures. A gate whose failures are all accepted has none: main had
// every one of them before the change.
func NewFailures(failures, accepted []string) []string {
	var out []string
	for _, f := range failures {
		if !slices.Contains(accepted, f) {
			out = append(out, f)
		}
	}
	return out
}

// acceptedRetry is the retry context of a gate that failed with failures
// the main branch does not have: only those, since the accepted ones are
// not the change's to fix, and where the full output is.
func acceptedRetry(in Input, headline string, fresh []string, known int) string {
	main := in.Project.MainBranch
	var b strings.Builder
	b.WriteString(headline)
	fmt.Fprintf(&b, " %s fails this gate too: %s already on %s %s accepted (setctl apply --accept-baseline) and not yours to fix. ",
		main, english.Plural(known, "failure"), main, isAre(known))
	fmt.Fprintf(&b, "Your change adds %s that %s does not have:\n", english.Plural(len(fresh), "failure"), main)
	for _, f := range fresh {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	if rel := logRef(in); rel != "" {
		fmt.Fprintf(&b, "Full log: %s", rel)
	}
	return strings.TrimRight(b.String(), "\n")
}
