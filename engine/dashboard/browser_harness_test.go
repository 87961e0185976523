package dashboard

import (
	"context"
	"net/http/httptest"
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

// stopDashboard stops s, served by ts, as setctl dashboard does when it
// ends: its pages are told reason, then the server shuts down gracefully,
// within a second; the error is the shutdown's.
func stopDashboard(s *Server, ts *httptest.Server, reason string) error {
	s.Stop(reason)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return ts.Config.Shutdown(ctx)
}
