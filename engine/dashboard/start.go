package dashboard

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/set-engine/set/engine/rundir"
)

// errStarting refuses a start while the apply the dashboard started
// still runs.
var errStarting = errors.New("the setctl apply this dashboard started still runs: its output is on the overview")

// starter is the apply a project's dashboard started, if any.
type starter struct {
	mu      sync.Mutex
	running bool
	output  string // its log, relative to the project
	exit    string // how it ended; "" while it runs
}

// status is what the page shows of it.
func (st *starter) status() (running bool, output, exit string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.running, st.output, st.exit
}

// start starts p's apply in a session of its own, its output to a log
// below .set/logs/_dashboard, and returns that log's path relative to
// the project; by is who asked, written at the log's top.
func (st *starter) start(p *served, by string) (string, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.running {
		return "", errStarting
	}
	now := time.Now().UTC()
	abs, rel := p.layout.DashboardApplyLog(now.Format(rundir.DashboardApplyStamp))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", err
	}
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(f, "%s: started from the dashboard, asked by %s, in %s\n\n", now.Format(time.RFC3339), by, p.Root)
	fmt.Fprintf(f, "$ %s\n", strings.Join(p.Apply.Args, " "))
	cmd := &exec.Cmd{
		Path: p.Apply.Path, Args: p.Apply.Args, Dir: p.Root, Stdout: f, Stderr: f,
		// A session of its own: the dashboard's Ctrl-C does not reach it.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return "", fmt.Errorf("starting %s: %w", strings.Join(p.Apply.Args, " "), err)
	}
	st.running, st.output, st.exit = true, rel, ""
	go func() {
		err := cmd.Wait()
		f.Close()
		st.mu.Lock()
		defer st.mu.Unlock()
		st.running, st.exit = false, "exit status 0"
		if err != nil {
			st.exit = err.Error()
		}
	}()
	return rel, nil
}
