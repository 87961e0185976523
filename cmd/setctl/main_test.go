package main

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"cuelang.org/go/mod/modregistrytest"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/set-engine/set/internal/testpar"
)

func TestMain(m *testing.M) {
	testscript.Main(waitingTests{m}, map[string]func(){
		"setctl": func() { os.Exit(Main(os.Args[1:], osProcess())) },
	})
}

// waitingTests runs the package's tests with twice as many parallel
// tests at once as go test's default (testpar.Double): the scripts and
// the kill campaign spend about half their time waiting for the
// processes they start.
type waitingTests struct{ m *testing.M }

func (w waitingTests) Run() int {
	flag.Parse()
	testpar.Double()
	return w.m.Run()
}

// updateScripts rewrites, in the scripts, the files that cmp compares
// against (goldens such as apply_json's want-run.jsonl) with what the
// commands wrote: go test ./cmd/setctl -run 'TestScripts/apply$'
// -update-scripts, then read the diff. cmpenv's goldens are not rewritten.
var updateScripts = flag.Bool("update-scripts", false, "update the golden files of testdata/script")

// TestScripts runs the CLI scripts of testdata/script. Each script gets its
// own CUE cache, HOME and git identity, and no registry; a script whose
// archive holds a _registry directory gets a registry on 127.0.0.1 serving
// the modules in it (one directory per module version, named as
// modregistrytest.New describes: example.com_acme_profiles_v0.1.0) as
// CUE_REGISTRY. The commands modelserver and modelrequests start a
// scripted model endpoint and show what it was asked (modelserver_test.go);
// github starts a stand-in GitHub and plays its reviewers
// (githubserver_test.go).
//
// A script pins what a command prints with cmp against a golden in its
// archive; what differs from run to run (times, hashes, durations, $WORK)
// goes through normalise first, and the lines of changes that run at
// once are compared one change at a time (exec grep '^TIME greet '). A
// regex match is left only where the output itself may differ.
func TestScripts(t *testing.T) {
	goCache, goModCache := goEnv("GOCACHE"), goEnv("GOMODCACHE")
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("..", "..", "testdata", "script"),
		UpdateScripts: *updateScripts,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"normalise": normalise, "nostrayset": noStraySet, "modelserver": modelServer, "modelrequests": modelRequests,
			"github": gitHub,
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("CUE_CACHE_DIR", filepath.Join(env.WorkDir, ".cue-cache"))
			env.Setenv("CUE_REGISTRY", "none")
			env.Setenv("NO_COLOR", "1")
			env.Setenv("GIT_AUTHOR_NAME", "set test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "set test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(env.WorkDir, ".gitconfig"))
			// Gates run the go tool: share the build cache, never the network.
			// With -trimpath a package's build does not depend on the
			// directory it is in, so the integration gates, which build on
			// main the tree a change's gates built in its worktree, find
			// that build and its passing test result in the cache.
			env.Setenv("GOCACHE", goCache)
			env.Setenv("GOMODCACHE", goModCache)
			env.Setenv("GOPROXY", "off")
			env.Setenv("GOFLAGS", "-buildvcs=false -trimpath")
			env.Setenv("GOTOOLCHAIN", "local")
			setupModelServer(env)
			setupGitHub(env)
			if modules := filepath.Join(env.WorkDir, "_registry"); dirExists(modules) {
				reg, err := modregistrytest.New(os.DirFS(modules), "")
				if err != nil {
					return err
				}
				env.Defer(reg.Close)
				env.Setenv("CUE_REGISTRY", reg.Host()+"+insecure")
			}
			return os.WriteFile(filepath.Join(env.WorkDir, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n"), 0o644)
		},
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
	})
}

// TestOwnProjectsVet: this repository's own set.cue and the bundled
// examples must pass `setctl vet`.
func TestOwnProjectsVet(t *testing.T) {
	t.Setenv("CUE_CACHE_DIR", t.TempDir())
	t.Setenv("CUE_REGISTRY", "none")
	for _, dir := range []string{"../..", "../../examples/linkshort"} {
		var stdout, stderr strings.Builder
		if code := Main([]string{"-C", dir, "vet"}, testProcess(&stdout, &stderr)); code != exitOK {
			t.Errorf("setctl -C %s vet exited %d:\n%s", dir, code, stderr.String())
		}
	}
}

// testProcess is the process of a command run in a test: it writes to
// stdout and stderr, has nothing on stdin (not a terminal) and the test's
// environment.
func testProcess(stdout, stderr io.Writer) Process {
	return Process{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Environ: os.Environ()}
}

func dirExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// normalisers replace, in order, what differs from one run to the next
// in set's output, JSON and text alike; normalise says what each stands
// for.
var normalisers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"`), `"TIME"`},
	{regexp.MustCompile(`"(pid|durationMs|ageMs|waitMs|agentMs|verifyMs|queueMs|integrateMs)":( ?)\d+`), `"$1":${2}0`},
	{regexp.MustCompile(`\bPID \d+\b`), `PID 0`},
	{regexp.MustCompile(`\b[0-9a-f]{64}\b`), `SUM`},
	{regexp.MustCompile(`\b[0-9a-f]{40}\b`), `SHA`},
	{regexp.MustCompile(`\b[0-9a-f]{12}\b`), `SHA12`},
	{regexp.MustCompile(`\b[0-9a-f]{10}\b`), `SHA10`},
	{regexp.MustCompile(` at [0-9a-f]{7}\b`), ` at SHA7`}, // doctor's "main at 1a2b3c4"
	{regexp.MustCompile(`\b\d{8}T\d{6}Z\b`), `RUN`},
	{regexp.MustCompile(`\barchive/\d{4}-\d\d-\d\d-`), `archive/DATE-`}, // archived change folders
	{regexp.MustCompile(`\b(\d+h)?(\d+m)?\d+(\.\d+)?(ns|µs|ms|s)\b`), `DUR`},
	{regexp.MustCompile(`\b\d+(\.\d)? (B|kB|MB|GB)\b`), `SIZE`},           // what setctl prune frees
	{regexp.MustCompile(`\b(\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d\b`), `TIME`}, // clock times in text
	{regexp.MustCompile(`\bgit version [0-9][^\s"]*( \([^)"]*\))?`), `git version VERSION`},
	{regexp.MustCompile(`\bgo1\.\d+(\.\d+)?((rc|beta)\d+)?\b`), `GOVERSION`},
	{regexp.MustCompile(`\b(not running as root|running as root with IS_SANDBOX=1)\b`), `USER`},
	{regexp.MustCompile(`http://127\.0\.0\.1:\d+/`), `http://127.0.0.1:PORT/`}, // a test server's pages (the github command)
	{regexp.MustCompile(`\(user [^\s,)]+`), `(user USER`},                      // who asked a CONTROL: "setctl pause (user alice)"
}

// normalise is the script command `normalise FILE...`: it rewrites each
// file with what differs from one run, or one machine, to the next
// replaced by a placeholder: the script's $WORK by "$WORK"; times ("TIME"
// in JSON, TIME for the clock times and dates of text); PIDs and the
// measured milliseconds of JSON (0) and of text (PID 0); sha256 sums
// (SUM); git hashes, full (SHA) and short, with their length (SHA12,
// SHA10, and SHA7 for the one doctor shows); run IDs (RUN); the dates of archived change folders
// (archive/DATE-); durations in messages (DUR); sizes in bytes (SIZE:
// what setctl prune frees); git's version (git
// version VERSION) and Go's (GOVERSION); whether the script runs as root, which is why
// claude runs with bypassed permissions (USER: the scripts' claude agents
// set IS_SANDBOX=1); and the port of a test server's pages in its URLs
// (http://127.0.0.1:PORT/); and the user who asked a pause ("(user
// USER"). What remains is what a golden can pin: a script
// copies a command's output and compares it exactly,
//
//	cp stdout apply.txt
//	normalise apply.txt
//	cmp apply.txt want-apply
func normalise(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: normalise FILE...")
	}
	work := ts.Getenv("WORK")
	for _, name := range args {
		data := strings.ReplaceAll(ts.ReadFile(name), work, "$WORK")
		for _, n := range normalisers {
			data = n.re.ReplaceAllString(data, n.with)
		}
		ts.Check(os.WriteFile(ts.MkAbs(name), []byte(data), 0o644))
	}
}

// goEnv is a value of `go env`, for the scripts' gates.
func goEnv(key string) string {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// writeFiles writes files (slash-separated paths relative to dir, and
// their contents) into dir, making the directories they need.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitIn runs git in dir and returns its output, trimmed; an error fails
// the test.
func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// initRepo makes dir a repository whose main holds every file in it, in
// one commit.
func initRepo(t testing.TB, dir string) {
	t.Helper()
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "skeleton")
}

// cueOf is v in JSON, which CUE reads as the same value.
func cueOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// envMap is an environment (KEY=VALUE entries) as a map, for agent.env.
func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}
