package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/redact"
	"github.com/set-engine/set/engine/runner"
)

// Bounds of the output quoted in an exec gate's retry context.
const (
	retryTailBytes = 8 << 10
	retryTailLines = 60
)

// runExec runs an exec gate's command through its runner. The log holds
// the command's combined output; when the command timed out or could not
// run, or failures were compared with main's accepted ones, a last line
// starting with "[set]" says so. Messages name the command as
// Result.Command does. A command that fails is judged by judgeFailure.
func runExec(ctx context.Context, in Input, runners map[string]runner.Runner, res Result) Result {
	g, r, scan, err := execSetup(in, runners, res)
	if err != nil {
		return errorResult(in, res, err)
	}
	// log is the log file; logw writes to it, masking secrets line by
	// line, and is closed (its last line written) before log.
	var log *os.File
	var logw *redact.Writer
	if in.LogPath != "" {
		if err := os.MkdirAll(filepath.Dir(in.LogPath), 0o755); err != nil {
			return errorResult(in, res, fmt.Errorf("gate log: %w", err))
		}
		f, err := os.Create(in.LogPath)
		if err != nil {
			return errorResult(in, res, fmt.Errorf("gate log: %w", err))
		}
		defer f.Close()
		log, logw = f, in.Redact.Writer(f)
	}
	timeout := time.Duration(in.Step.Timeout)
	vars := withBase(g.Env, in.Base)
	e := runner.Exec{
		Argv:    slices.Clone(g.Run),
		Dir:     in.Worktree,
		Env:     ExecEnv(in.Env, in.Project.Passed(), vars),
		Vars:    vars,
		Export:  g.Export,
		Timeout: timeout,
	}
	e.Log = scan
	if log != nil {
		e.Log = io.MultiWriter(logw, scan)
	}
	er, err := r.Exec(ctx, e)
	res.ExitCode, res.Duration, res.Base = er.ExitCode, er.Duration, er.Base
	res.Tail = outputTail(er.Output)
	trailer := func(format string, args ...any) {
		if log != nil {
			fmt.Fprintf(logw, "\n[set] "+format+"\n", args...)
		}
	}
	res.Command = cmp.Or(scan.marked(), CommandLine(g.Run))
	cmdline := res.Command
	switch {
	case err != nil:
		trailer("could not run: %v", err)
		return asError(res, fmt.Errorf("gate %q (`%s`): %w", res.Gate, cmdline, err))
	case er.TimedOut:
		res.Status, res.TimedOut = failStatus(res), true
		res.Reason = fmt.Sprintf("timed out after %s", timeout)
		trailer("%s", res.Reason)
		res.RetryContext = execRetry(in, fmt.Sprintf("Gate %s (`%s`) timed out after %s.", res.Gate, cmdline, timeout), er.Output)
	case er.ExitCode != 0:
		res.Failures = scan.failures()
		res.Missing = missingProgram(er.ExitCode, res.Tail, len(in.After) > 0)
		if res.Missing != "" {
			res.After = in.After
		}
		var compared bool
		res, compared = judgeFailure(in, res, er.Output)
		if compared {
			trailer("%s", res.Reason)
		}
	default:
		res.Status = StatusPass
		if reason, ok := skipReason(er.Output); ok {
			res.Status, res.Reason = StatusSkip, reason
		}
	}
	if log != nil {
		if err := errors.Join(logw.Close(), log.Close()); err != nil {
			return asError(res, fmt.Errorf("gate log: %w", err))
		}
	}
	return res
}

// execSetup finds what running res's exec gate needs: its definition, its
// runner and a scanner of its output (with its failures pattern, if it
// has one). An error is the configuration's, never the change's.
func execSetup(in Input, runners map[string]runner.Runner, res Result) (config.Gate, runner.Runner, *outputScanner, error) {
	if in.Project == nil {
		return config.Gate{}, nil, nil, fmt.Errorf("gate %q: no project configuration", res.Gate)
	}
	g, ok := in.Project.Gates[res.Gate]
	if !ok {
		return g, nil, nil, fmt.Errorf("gate %q is not defined in the project", res.Gate)
	}
	if len(g.Run) == 0 {
		return g, nil, nil, fmt.Errorf("exec gate %q has no command (run is empty)", res.Gate)
	}
	r, ok := runners[res.Runner]
	if !ok || r == nil {
		return g, nil, nil, fmt.Errorf("gate %q: no runner %q is available (have: %s)", res.Gate, res.Runner, runnerNames(runners))
	}
	if g.Failures == "" {
		return g, r, newOutputScanner(nil), nil
	}
	re, err := regexp.Compile(g.Failures)
	if err != nil {
		return g, r, nil, fmt.Errorf("gate %q: failures: %w", res.Gate, err)
	}
	return g, r, newOutputScanner(re), nil
}

// judgeFailure judges a command that exited non-zero (res.ExitCode) and
// printed output, whose failures pattern found res.Failures. Without
// accepted failures of main, the exit code decides. With them (the run
// accepted main's failures):
//   - a failure not accepted fails the gate, and the retry context names
//     only such failures when some accepted ones are there too;
//   - output that names no failure fails the gate on its exit code: set
//     cannot tell what failed, so it cannot be main's;
//   - output whose failures are all accepted passes: main had every one
//     of them. Output the pattern does not name cannot fail the gate then.
//
// A failure that follows from something else (Result.Caused: a program
// not found, after an earlier gate that failed, maybe) says so in its
// reason and retry context.
//
// compared reports whether the failures were compared with the accepted
// ones (the result then says how, and the log should too).
func judgeFailure(in Input, res Result, output []byte) (_ Result, compared bool) {
	headline := fmt.Sprintf("Gate %s (`%s`) failed with exit code %d.", res.Gate, res.Command, res.ExitCode)
	res.Status = failStatus(res)
	res.Reason = fmt.Sprintf("exit code %d", res.ExitCode)
	if res.Caused() {
		c := Cause(res.Missing, res.After)
		headline = fmt.Sprintf("Gate %s (`%s`) could not run: %s (exit code %d).", res.Gate, res.Command, c, res.ExitCode)
		res.Reason = fmt.Sprintf("could not run: %s (exit code %d)", c, res.ExitCode)
	}
	fresh := NewFailures(res.Failures, in.Accepted)
	known := len(res.Failures) - len(fresh)
	switch {
	case in.Accepted == nil || len(res.Failures) == 0 || known == 0:
		// Nothing accepted to leave out: the exit code decides and the
		// output is all the change's.
		res.RetryContext = execRetry(in, headline, output)
		return res, false
	case len(fresh) == 0:
		res.Status = StatusPass
		res.Reason = fmt.Sprintf("exit code %d: %s also on %s, accepted", res.ExitCode, english.Plural(known, "failure"), in.Project.MainBranch)
	default:
		res.Reason = fmt.Sprintf("exit code %d: %s not on %s (%d also on %[3]s, accepted)",
			res.ExitCode, english.Plural(len(fresh), "failure"), in.Project.MainBranch, known)
		res.RetryContext = acceptedRetry(in, headline, fresh, known)
	}
	return res, true
}

// ExecEnv is the environment a gate's command runs with on the host:
// HostEnv of base (nil: the engine's environment) and the project's
// passEnv, followed by the gate's variables as KEY=VALUE sorted by key, so
// that the gate's win. Every command set runs for a gate (its run, and
// its describe in setctl doctor) gets it, so they see the same variables.
func ExecEnv(base, passEnv []string, gateEnv map[string]string) []string {
	if base == nil {
		base = os.Environ()
	}
	env := HostEnv(base, passEnv)
	keys := make([]string, 0, len(gateEnv))
	for k := range gateEnv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+gateEnv[k])
	}
	return env
}

// BaseVar names the variable that tells an exec gate's command the commit
// the change's diff is compared with (Input.Base), so that a profile's
// script can read the project's settings as they were before the change
// (node's lint, skipped where the test script runs the linter, is skipped
// only where it did before the change too). A gate's own env that sets
// it wins; it is unset where there is no base.
const BaseVar = "SET_BASE"

// withBase is env with BaseVar set to base, unless base is "" or env sets
// it; env itself is not modified.
func withBase(env map[string]string, base string) map[string]string {
	if _, ok := env[BaseVar]; ok || base == "" {
		return env
	}
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	out[BaseVar] = base
	return out
}

// hostEnvNames are the variables of set's environment that every command
// set runs on the host for a gate sees, besides LC_* and the project's
// passEnv: what finding programs, a home, a temporary directory and the
// locale takes.
var hostEnvNames = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "TZ", "LANG", "LANGUAGE"}

// HostEnv is the part of environ (KEY=VALUE entries, in their order) that
// a command set runs on the host for a gate sees: the variables of
// hostEnvNames, LC_* and those passEnv names. The rest of set's
// environment, API keys included, stays out.
func HostEnv(environ, passEnv []string) []string {
	env := make([]string, 0, len(hostEnvNames)+len(passEnv))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(hostEnvNames, k) || strings.HasPrefix(k, "LC_") || slices.Contains(passEnv, k) {
			env = append(env, kv)
		}
	}
	return env
}

func runnerNames(runners map[string]runner.Runner) string {
	names := make([]string, 0, len(runners))
	for n := range runners {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// execRetry is the retry context of a failed command: what failed, the
// tail of its output in a fence, and where the full log is.
func execRetry(in Input, headline string, output []byte) string {
	var b strings.Builder
	b.WriteString(headline)
	if tail := outputTail(output); tail == "" {
		b.WriteString(" It printed nothing.\n")
	} else {
		fence := fenceFor(tail)
		fmt.Fprintf(&b, " Last lines of its output:\n%s\n%s\n%s\n", fence, tail, fence)
	}
	if rel := logRef(in); rel != "" {
		fmt.Fprintf(&b, "Full log: %s", rel)
	}
	return strings.TrimRight(b.String(), "\n")
}

func logRef(in Input) string {
	if in.LogRel != "" {
		return in.LogRel
	}
	return in.LogPath
}

var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// outputTail returns at most the last retryTailLines lines and
// retryTailBytes bytes of out, starting at a line boundary, valid UTF-8,
// without terminal colour codes, and with a carriage-return-overwritten
// line reduced to what it finally showed.
func outputTail(out []byte) string {
	if len(out) > retryTailBytes {
		out = out[len(out)-retryTailBytes:]
		if i := strings.IndexByte(string(out), '\n'); i >= 0 && i < len(out)-1 {
			out = out[i+1:]
		}
	}
	s := string(out)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = ansiEscape.ReplaceAllString(s, "")
	lines := strings.Split(strings.TrimRight(s, "\r\n"), "\n")
	if len(lines) > retryTailLines {
		lines = lines[len(lines)-retryTailLines:]
	}
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// fenceFor returns a backtick fence longer than any backtick run in s, so
// the output cannot close it early.
func fenceFor(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// shellQuote is s as one word a shell reader would type: single-quoted
// unless it holds only safe characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
