package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/set-engine/set/engine/control"
	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
	"github.com/set-engine/set/internal/browsertest"
)

// TestDashboardControlBrowser drives setctl dashboard (the built setctl:
// this test binary, as testscript.Main installs it) in a headless
// Chromium, end to end: the overview offers to start a run and shows the
// plan setctl plan prints first; Apply starts setctl apply --yes, whose
// exec agent works until the test lets it; the page pauses the change,
// resumes it and stops the run, each button disabled while its request
// is pending; the journal then holds the three CONTROL events, each
// saying the dashboard asked, and setctl events prints who. A dashboard
// served with --allow-remote refuses a state-changing request without
// its token in the header, from the page and over plain HTTP.
// Screenshots go to the test's artifact directory.
func TestDashboardControlBrowser(t *testing.T) {
	// The apply the page starts takes its time: a step may take a minute.
	b := browsertest.New(t, time.Minute)
	// The page's requests the test makes refused on purpose are logged by
	// the browser as failed loads: they are no problem.
	b.Expect("403", "409")
	setctl, err := exec.LookPath("setctl") // the test binary, as testscript.Main installs it
	if err != nil {
		t.Fatal(err)
	}
	dir := controlProject(t)

	url := startDashboard(t, setctl, dir, "--addr", "127.0.0.1:0")
	row := func(status string) string {
		return fmt.Sprintf(`#changes tr[data-change="greet"] td.status[data-status=%q]`, status)
	}
	button := func(action string) string {
		return fmt.Sprintf(`#changes tr[data-change="greet"] button[data-action=%q]:not([disabled])`, action)
	}

	b.Do("the plan before the run",
		chromedp.Navigate(url),
		chromedp.Click(`#control button[data-action="preview"]`),
		chromedp.WaitVisible(`#plan-preview`),
	)
	b.WaitFor(`document.querySelector("#plan-preview").textContent.includes("greet")`)
	if plan := b.Text(`#plan-preview`); !strings.Contains(plan, "REQ-GREET-01") {
		t.Errorf("the plan preview does not show the plan setctl plan prints:\n%s", plan)
	}
	b.Shot("control-plan.png")

	b.Do("the run started from the page",
		chromedp.Click(`#control button[data-action="apply"]`),
		chromedp.WaitVisible(`#apply-output`),
		chromedp.WaitVisible(row("implementing")),
		chromedp.WaitVisible(button("pause")),
	)
	b.WaitFor(`document.querySelector("#apply-output").textContent.includes("started from the dashboard")`)
	awaitFile(t, filepath.Join(dir, "started"))
	b.Shot("control-running.png")

	// The click disables the button until the apply answered; the answer
	// comes within a tick of the control file, so the disabled button is
	// asserted from the click's own task.
	disabled := b.Eval(`(() => { const bt = document.querySelector('#changes tr[data-change="greet"] button[data-action="pause"]'); bt.click();
		const now = document.querySelector('#changes tr[data-change="greet"] button.control');
		return now.disabled + " " + now.textContent; })()`)
	if disabled != "true Pausing…" {
		t.Errorf("the Pause button while its request is pending: %q", disabled)
	}
	b.Do("greet paused", chromedp.WaitVisible(row("paused")), chromedp.WaitVisible(button("resume")))
	if msg := b.Text(`#control-msg`); msg != "paused: greet" {
		t.Errorf("the page says %q after the pause", msg)
	}
	b.Shot("control-paused.png")

	b.Do("greet resumed",
		chromedp.Click(button("resume")),
		chromedp.WaitVisible(row("implementing")),
		chromedp.WaitVisible(button("pause")),
	)
	if msg := b.Text(`#control-msg`); msg != "resumed: greet" {
		t.Errorf("the page says %q after the resume", msg)
	}

	b.Do("the stop asked",
		chromedp.Click(`#control button[data-action="stop"]`),
		chromedp.WaitVisible(`#control button[data-action="stop-now"]`),
	)
	b.Shot("control-stop.png")
	b.Do("the run stopped",
		chromedp.Click(`#control button[data-action="stop-now"]`),
		chromedp.WaitVisible(`#control button[data-action="preview"]`),
		chromedp.WaitVisible(`#run-state[data-state="finished"]`),
	)
	if line := b.Text(`#runline`); !strings.Contains(line, "interrupted") {
		t.Errorf("the run line after the stop: %q", line)
	}
	// The page shows the output of the apply it started, to its end.
	b.WaitFor(`document.querySelector("#apply-output-card summary").textContent.includes("ended (exit status 1)")`)
	b.WaitFor(`document.querySelector("#apply-output").textContent.includes("Run interrupted")`)
	b.Shot("control-stopped.png")

	// The journal says who asked, and setctl events shows it.
	user := control.User()
	var controls []string
	events, err := journal.ReadFile(filepath.Join(dir, ".set", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Type == journal.Control {
			d, _ := journal.Decode[journal.ControlData](e)
			controls = append(controls, fmt.Sprintf("%s %s %v by %s", d.Action, d.Change, d.Changes, d.By))
		}
	}
	by := "dashboard (user " + user + ", 127.0.0.1)"
	want := []string{"pause greet [greet] by " + by, "resume greet [greet] by " + by, "stop  [] by " + by}
	if strings.Join(controls, "\n") != strings.Join(want, "\n") {
		t.Errorf("CONTROL events:\n%s\nwant:\n%s", strings.Join(controls, "\n"), strings.Join(want, "\n"))
	}
	var stdout, stderr strings.Builder
	if code := Main([]string{"-C", dir, "events"}, testProcess(&stdout, &stderr)); code != exitOK {
		t.Fatalf("setctl events: %d %s", code, stderr.String())
	}
	for _, line := range []string{"pause greet: greet; asked by " + by, "resume greet: greet; asked by " + by, "stop: the run stops as on Ctrl-C; asked by " + by, "run finished: interrupted"} {
		if !strings.Contains(stdout.String(), line) {
			t.Errorf("setctl events lacks %q:\n%s", line, stdout.String())
		}
	}

	// --allow-remote: a state-changing request needs the token in its
	// header; the cookie or the URL's token is not enough.
	remote := startDashboard(t, setctl, dir, "--addr", "0.0.0.0:0", "--allow-remote")
	token := remote[strings.Index(remote, "?token=")+len("?token="):]
	base := strings.TrimSuffix(remote[:strings.Index(remote, "?")], "/")
	req, _ := http.NewRequest(http.MethodPost, base+"/api/p/0/start?token="+token, strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	code, body := do(t, req)
	if code != http.StatusForbidden || !strings.Contains(body, "needs the access token in its X-Setctl-Token header") {
		t.Errorf("a start without the token's header: %d %s", code, body)
	}
	b.Do("the remote dashboard", chromedp.Navigate(remote), chromedp.WaitVisible(`#control button[data-action="preview"]`))
	refused := b.Eval(`fetch("/api/p/0/control", {method: "POST", headers: {"Content-Type": "application/json"}, body: '{"action":"stop"}'})
		.then(async (r) => r.status + " " + (await r.text()).trim())`)
	if !strings.HasPrefix(refused, "403 setctl dashboard: a request that changes a run needs the access token") {
		t.Errorf("the page's request without the token's header: %q", refused)
	}
	// The page's own request, with it, passes: here nothing runs.
	allowed := b.Eval(`fetch("/api/p/0/control").then((r) => r.json()).then((v) => fetch("/api/p/0/control",
		{method: "POST", headers: {"Content-Type": "application/json", "X-Setctl-Token": v.token}, body: '{"action":"stop"}'}))
		.then(async (r) => r.status + " " + (await r.text()).trim())`)
	if allowed != "409 no setctl apply is running in this project: there is nothing to stop" {
		t.Errorf("the page's request with the token's header: %q", allowed)
	}
	// The page leaves before its dashboards stop, which would cut its
	// stream.
	b.Do("leaving the page", chromedp.Navigate("about:blank"))
}

// controlProject is a Go project whose exec agent says it started (the
// file "started" in the project) and works while the file "block" there
// exists, committed on main.
func controlProject(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CUE_CACHE_DIR", filepath.Join(home, ".cue-cache"))
	t.Setenv("CUE_REGISTRY", "none")
	t.Setenv("NO_COLOR", "1")
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "set test", "GIT_AUTHOR_EMAIL": "test@example.com",
		"GIT_COMMITTER_NAME": "set test", "GIT_COMMITTER_EMAIL": "test@example.com", "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL": filepath.Join(home, ".gitconfig")} {
		t.Setenv(k, v)
	}
	dir := filepath.Join(t.TempDir(), "hello")
	writeFiles(t, dir, map[string]string{
		"agent.sh": fmt.Sprintf(`echo working
touch %[1]q/started
while test -e %[1]q/block; do sleep 0.05; done
printf 'package hello\n\n// Greet greets name.\nfunc Greet(name string) string { return "Hello, " + name + "!" }\n' > greet.go
printf 'package hello\n\nimport "testing"\n\n// REQ-GREET-01\nfunc TestGreet(t *testing.T) {\n\tif Greet("Ada") != "Hello, Ada!" {\n\t\tt.Fatal(Greet("Ada"))\n\t}\n}\n' > greet_test.go
`, dir),
		"cue.mod/module.cue": "module: \"example.com/hello@v0\"\nlanguage: version: \"v0.17.0\"\ndeps: \"github.com/set-engine/set@v0\": v: \"v0.1.0\"\n",
		"set.cue": `package hello

import "github.com/set-engine/set/profiles/golang"

project: golang.#Project & {
	name: "hello"
	spec: ["docs/spec.md"]
	agent: {
		adapter: "exec"
		argv: ["sh", "agent.sh"]
	}
	gates: {
		build: run: ["true"]
		fmt: run: ["true"]
		vet: run: ["true"]
		test: run: ["true"]
	}
}
`,
		"go.mod":     "module example.com/hello\n\ngo 1.26\n",
		"hello.go":   "// Package hello greets.\npackage hello\n",
		".gitignore": ".set/\nblock\nstarted\n",
		"docs/spec.md": `# Hello

### REQ-GREET-01: Greet by name
#### Scenario: a name
- **WHEN** Greet("Ada") is called
- **THEN** it returns "Hello, Ada!"
`,
		"block": "",
	})
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "skeleton"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// Whatever the test left running ends: the agent finishes, and an
	// apply still running is stopped.
	t.Cleanup(func() {
		os.Remove(filepath.Join(dir, "block"))
		setDir := filepath.Join(dir, ".set")
		if held, _, _ := state.LockHolder(setDir); held {
			control.Append(filepath.Join(setDir, "control.jsonl"), control.Request{Action: control.Stop, By: "the test's cleanup"})
		}
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if held, _, _ := state.LockHolder(setDir); !held {
				return
			}
		}
	})
	return dir
}

var dashboardURL = regexp.MustCompile(`on (http://\S+) \(Ctrl-C stops it\)`)

// startDashboard runs setctl dashboard args in dir until the test ends,
// and returns the URL it prints.
func startDashboard(t *testing.T, setctl, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(setctl, append([]string{"dashboard"}, args...)...)
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	m := dashboardURL.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("setctl dashboard said %q (%v)", line, err)
	}
	go io.Copy(io.Discard, stdout)
	return m[1]
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// awaitFile waits until path exists.
func awaitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear", path)
}
