package dashboard

import (
	"testing"
	"time"

	"github.com/set-engine/set/internal/browsertest"
)

// newBrowser starts the headless Chromium a browser test drives the
// dashboard in (see browsertest.Browser: 1400×1000, console problems fail
// the test, skipped under -short); one step may take 20 seconds.
func newBrowser(t *testing.T) *browsertest.Browser {
	t.Helper()
	return browsertest.New(t, 20*time.Second)
}
