package gate

import "testing"

// TestExecSkip: a command that exits 0 and whose last line says it
// checked nothing (SkipMarker) is skipped, with that line's reason; the
// marker elsewhere in the output, or from a command that fails, changes
// nothing.
func TestExecSkip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script, status, reason string
	}{
		{"marker last", `echo "checking"; echo "[set] skip: covered by the test gate: the test script runs xo (xo && ava)"; echo`, StatusSkip, "covered by the test gate: the test script runs xo (xo && ava)"},
		{"marker on stderr", `echo "[set] skip: nothing here" >&2`, StatusSkip, "nothing here"},
		{"marker not last", `echo "[set] skip: covered"; echo "linted 3 files"`, StatusPass, ""},
		{"marker without a reason", `echo "[set] skip: "`, StatusPass, ""},
		{"marker from a failing command", `echo "[set] skip: covered"; exit 1`, StatusFail, "exit code 1"},
	} {
		in, _ := execInput(t, "lint", "sh", "-c", tc.script)
		res := runGate(t, in)
		if res.Status != tc.status || res.Reason != tc.reason {
			t.Errorf("%s: %s (%q), want %s (%q)", tc.name, res.Status, res.Reason, tc.status, tc.reason)
		}
		if tc.status != StatusFail && res.RetryContext != "" {
			t.Errorf("%s: retry context %q", tc.name, res.RetryContext)
		}
	}
}
