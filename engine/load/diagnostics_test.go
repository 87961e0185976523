package load

import (
	"errors"
	"fmt"
	"testing"

	"github.com/set-engine/set/engine/diag"
)

type lister struct{}

func (lister) Error() string { return "lister" }
func (lister) Diagnostics() diag.List {
	return diag.List{{Severity: diag.Warning, Summary: "from lister"}}
}

// TestDiagnosticsOfOtherErrors: an error that is not CUE's becomes
// diagnostics as it says it is (a Diagnostic, a Lister, even wrapped), the
// members of a join one by one, and any other error its first line as the
// summary and the rest as the detail.
func TestDiagnosticsOfOtherErrors(t *testing.T) {
	err := errors.Join(errors.New("one\ntwo"), fmt.Errorf("wrapped: %w", lister{}), diag.Diagnostic{Severity: diag.Error, Summary: "d"})
	got := Diagnostics(err)
	want := diag.List{
		{Severity: diag.Error, Summary: "one", Detail: "two"},
		{Severity: diag.Warning, Summary: "from lister"},
		{Severity: diag.Error, Summary: "d"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Diagnostics = %+v\nwant %+v", got, want)
	}
	if Diagnostics(nil) != nil || got.Err() == nil {
		t.Error("Diagnostics(nil) is not nil, or the list has no error")
	}
}
