package gate

import (
	"bytes"
	"strings"
)

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
	out := bytes.TrimRight(output, " \t\r\n")
	last := string(out[bytes.LastIndexByte(out, '\n')+1:])
	reason, ok = strings.CutPrefix(strings.TrimSpace(last), SkipMarker)
	reason = strings.TrimSpace(reason)
	return reason, ok && reason != ""
}
