// Package browsertest drives a page in a headless Chromium from a Go test:
// the dashboard's browser tests (engine/dashboard) and setctl's end-to-end
// dashboard test (cmd/setctl) share it, so that both see the page the same
// way: at the size of a laptop's screen, failing on whatever the page
// writes to its console, with screenshots among the test's artifacts.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/set-engine/set/internal/clitest"
)

// Browser is a headless Chromium a test drives a page in, its window
// 1400×1000. Every message the page writes to its console, every
// exception it leaves uncaught and every error of the browser's log (a
// failed request, a refused script or style) is a problem, and the test
// fails with them at its end, but for those Expect names.
type Browser struct {
	t   *testing.T
	ctx context.Context
	// dir is where Shot writes screenshots: the test's artifact directory
	// (go test -artifacts keeps them, under -outputdir).
	dir string
	// patience is how long one Do or WaitFor may take.
	patience time.Duration

	mu       sync.Mutex
	problems []string
	expected []string
}

// New starts a Chromium for t (skipping t without one, see
// clitest.Chromium, and under -short); it stops with t. One Do or WaitFor
// may take patience; the whole test at most ten of them.
func New(t *testing.T, patience time.Duration) *Browser {
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
	ctx, cancelTimeout := context.WithTimeout(ctx, 10*patience)
	b := &Browser{t: t, ctx: ctx, dir: t.ArtifactDir(), patience: patience}
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
		problems, expected := b.problems, b.expected
		b.mu.Unlock()
		cancelTimeout()
		cancel()
		cancelAlloc()
		var real []string
		for _, p := range problems {
			if !containsAny(p, expected) {
				real = append(real, p)
			}
		}
		if len(real) > 0 {
			t.Errorf("the browser reported:\n%s", strings.Join(real, "\n"))
		}
	})
	return b
}

// Expect says that a problem the browser reports containing any of
// substrings is one the test causes on purpose (a request it makes
// refused, which the browser logs as a failed load): it does not fail the
// test.
func (b *Browser) Expect(substrings ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expected = append(b.expected, substrings...)
}

func containsAny(s string, substrings []string) bool {
	for _, sub := range substrings {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Do runs steps, failing the test with what when one fails or they take
// longer than the browser's patience; the page as it was then goes to
// failed.png among the screenshots.
func (b *Browser) Do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.patience)
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

// Shot writes a screenshot of the whole page to name in the artifact
// directory.
func (b *Browser) Shot(name string) {
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

// WaitFor waits, at most the browser's patience, until the JavaScript
// condition holds on the page.
func (b *Browser) WaitFor(cond string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(b.patience))); err != nil {
		b.t.Fatalf("waiting for %s: %v", cond, err)
	}
}

// Text is the text of the first element sel selects.
func (b *Browser) Text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(sel))
	if err != nil {
		b.t.Fatalf("the text of %s: %v", sel, err)
	}
	return s
}

// Eval is the value of the JavaScript expression js on the page; when js
// is a promise, the value it settles to.
func (b *Browser) Eval(js string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", js, err)
	}
	return s
}
