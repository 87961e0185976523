package gate

import "strings"

// SkipMarker starts the last line of output by which an exec gate's
// command says that it checked nothing because another gate does that
// work (node's lint when the package's test script runs its linter): a
// command that exits 0 and whose last line that is not blank starts with
// it is recorded as skipped, with the rest of the line as the reason
// ("skipped, covered by the test gate: …"), not as a pass that pretends a
// check ran. Only an exit code of 0 is read this way, so printing the
// marker never hides a failure; a marker anywhere else in the output is
// ordinary output.
const SkipMarker = "[set] skip: "

// skipReason is the reason an exec gate's output gives for having checked
// nothing (see SkipMarker); ok is false when the output gives none.
func skipReason(output []byte) (reason string, ok bool) {
	reason, ok = strings.CutPrefix(LastLine(string(output)), SkipMarker)
	reason = strings.TrimSpace(reason)
	return reason, ok && reason != ""
}

// LastLine is the last line of a command's output that is not blank,
// trimmed.
func LastLine(output string) string {
	out := strings.TrimSpace(output)
	return strings.TrimSpace(out[strings.LastIndexByte(out, '\n')+1:])
}
