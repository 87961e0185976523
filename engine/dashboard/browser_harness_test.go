package dashboard

import (
	"net/http"
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

// listen serves h on a free loopback port until t ends, and returns its
// URL.
func listen(t *testing.T, h http.Handler) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/"
}
