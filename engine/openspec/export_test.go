package openspec

import (
	"errors"

	"github.com/set-engine/set/engine/diag"
)

// ParseDelta reads a capability's delta spec as the OpenSpec CLI does and
// checks it as `openspec archive` does before archiving (a FROM/TO line
// that forms no pair; no operation at all; an ADDED or MODIFIED requirement
// without text or without a "####" scenario that has a body; a name twice in
// one section or in two that contradict each other). The error, when not
// nil, joins one Diagnostic per problem, naming the file
// "specs/<capability>/spec.md" (relative to the change's directory); the
// Delta is returned either way. Warnings (a requirement whose text has no
// SHALL or MUST, a requirement outside the four sections) are not errors.
func ParseDelta(capability string, src []byte) (*Delta, error) {
	if capability == "" {
		return nil, errors.New("openspec: ParseDelta: empty capability name")
	}
	file := "specs/" + capability + "/spec.md"
	d := parseDelta(capability, decodeUTF8(src))
	return d, diagnosticsErr(validateDelta(file, d))
}

// diagnosticsErr joins the error diagnostics of ds, nil when there is none.
func diagnosticsErr(ds []diag.Diagnostic) error {
	var errs []error
	for _, d := range ds {
		if d.Severity == diag.Error {
			errs = append(errs, d)
		}
	}
	return errors.Join(errs...)
}
