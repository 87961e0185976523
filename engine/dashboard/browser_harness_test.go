package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/set-engine/set/internal/clitest"
)

// browser is a headless Chromium a test drives the dashboard in, at the
// size of a laptop's screen (1400×1000). Every message the page writes to
// its console, every exception it leaves uncaught and every error of the
// browser's log (a failed request, a refused script or style) is a
// problem, and the test fails with them at its end.
type browser struct {
	t   *testing.T
	ctx context.Context
	// dir is where shot writes screenshots: the test's artifact directory
	// (go test -artifacts keeps them, under -outputdir).
	dir string

	mu       sync.Mutex
	problems []string
}

// newBrowser starts a Chromium for t (skipping t without one, see
// clitest.Chromium, and under -short); it stops with t.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	if testing.Short() {
		t.Skip("drives a real Chromium for seconds; go test without -short (make test) runs it")
	}
	chromium := clitest.Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	b := &browser{t: t, ctx: ctx, dir: t.ArtifactDir()}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
				b.mu.Lock()
				b.problems = append(b.problems, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		b.mu.Lock()
		problems := b.problems
		b.mu.Unlock()
		cancelTimeout()
		cancel()
		cancelAlloc()
		if len(problems) > 0 {
			t.Errorf("the browser reported:\n%s", strings.Join(problems, "\n"))
		}
	})
	return b
}

// listen serves h on a free loopback port until t ends, and returns its
// URL.
func listen(t *testing.T, h http.Handler) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/"
}

// do runs steps, failing the test with what when one fails or they take
// more than 20 seconds; the page as it was then goes to failed.png among
// the screenshots.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		if png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100)); err == nil {
			path := filepath.Join(b.dir, "failed.png")
			if os.WriteFile(path, png, 0o644) == nil {
				b.t.Logf("the page when %s failed: %s", what, path)
			}
		}
		b.t.Fatalf("%s: %v", what, err)
	}
}

// shot writes a screenshot of the whole page to name in the artifact
// directory.
func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", path)
}

// waitFor waits until the JavaScript condition holds on the page.
func (b *browser) waitFor(cond string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		b.t.Fatalf("waiting for %s: %v", cond, err)
	}
}

// text is the text of the first element sel selects.
func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(sel))
	if err != nil {
		b.t.Fatalf("the text of %s: %v", sel, err)
	}
	return s
}

// eval is the value of the JavaScript expression js on the page.
func (b *browser) eval(js string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", js, err)
	}
	return s
}
