package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/pflag"

	"github.com/set-engine/set/engine/diag"
	"github.com/set-engine/set/engine/load"
)

// Exit codes: 0 success, 1 error, 2 a usage error (a bad flag or
// argument, as Go's flag package and most CLIs exit), and, as in
// Terraform, 2 work pending (setctl plan --detailed-exitcode); 3 an
// apply that left pull requests open (exitOpen). The two 2s
// never meet: a command whose 2 means work pending sets pendingExit, and
// its usage errors exit 1 (command.usageExit).
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitPending = 2
	// exitOpen: setctl apply ended with pull requests still open, nothing
	// failed (pull-request delivery); a later apply picks them up.
	exitOpen = 3
)

// Process is what one invocation of setctl is given by the process that
// runs it: its standard streams and its environment. main passes its own
// (os.Stdin, os.Stdout, os.Stderr, os.Environ()); a test passes buffers.
// No command reads os.Stdin, writes os.Stdout or os.Stderr, or reads
// os.Getenv itself: each reaches them through its env.
type Process struct {
	// Stdin is read only to confirm, and only when it is a terminal.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Environ is the environment, as os.Environ gives it, that the
	// commands read: NO_COLOR and TERM, the Dagger variables, and the
	// environment the doctor checks agents under. CUE reads its own
	// variables (CUE_REGISTRY, CUE_CACHE_DIR) from the process, and the
	// engine starts agents, gates and git with the process's environment.
	Environ []string
}

// env is what one invocation of a command sees: its streams and
// environment (see Process) and its directory.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	environ        []string
	// dir is the directory -C named, or the working directory.
	dir string
	// diagnose, when set, takes the errors and warnings the command would
	// otherwise print to stderr (--json writes them to stdout as JSON),
	// positions relative to root.
	diagnose func(d diag.Diagnostic, root string)
}

// command is one subcommand. run gets the arguments after the command
// name and returns the exit code.
type command struct {
	name    string
	summary string
	usage   string // the full --help text after the usage line
	// arg names the one optional argument the command takes ("plan
	// file"); "" when it takes none.
	arg string
	// pendingExit: the command exits exitPending for work pending, so
	// its usage errors exit exitError, never the same 2 (a script
	// testing `$? -eq 2` must not read a typo, --detailed-exitcod, as
	// work pending).
	pendingExit bool
	run         func(e *env, args []string) int
}

// usageExit is the exit code of c's usage errors: exitUsage, or exitError
// for a command whose 2 means work pending.
func (c command) usageExit() int {
	if c.pendingExit {
		return exitError
	}
	return exitUsage
}

func commands() []command {
	return []command{
		initCommand(), vetCommand(), planCommand(), applyCommand(), statusCommand(), eventsCommand(),
		explainCommand(), logsCommand(), runsCommand(), pauseCommand(), resumeCommand(), dashboardCommand(), archiveCommand(),
		pruneCommand(), learnCommand(),
		doctorCommand(), versionCommand(),
	}
}

const mainUsage = `Usage: setctl [-C DIR] COMMAND [ARGS]

set turns a product spec into merged code: the spec is planned into small
changes, coding agents implement each change in its own git worktree, gates
check the work, and a serial merge queue moves main only to states whose
gates passed. The pipeline is configured in set.cue.

Commands:
%s
Help topics:
%s
Global options:
  -C DIR      run as if setctl was started in DIR

Exit status: 0 success, 1 error, 2 a usage error (an unknown command or
flag, a missing or bad argument); setctl plan exits 1 on a usage error, as
its 2 means changes to run (--detailed-exitcode); setctl apply exits 3
when it ended with pull requests still open and nothing failed
(pull-request delivery). Each command's --help says more.

Examples:
  setctl init --profile golang     # write set.cue, cue.mod and a spec template
  setctl vet                       # check set.cue and the spec
  setctl plan                      # show what a run would do
  setctl status --watch            # watch a run from another terminal
  setctl -C examples/linkshort plan --format dot | dot -Tsvg > plan.svg

Run 'setctl COMMAND --help' for a command's options, 'setctl help TOPIC'
for a topic.
`

// Main runs set with args (without the program name) in the process p
// and returns the exit code.
func Main(args []string, p Process) int {
	stdout, stderr := p.Stdout, p.Stderr
	e := &env{stdin: p.Stdin, stdout: stdout, stderr: stderr, environ: p.Environ}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "setctl: %v\n", err)
		return exitError
	}
	e.dir = wd
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch a := args[0]; {
		case a == "-C" || a == "--C":
			if len(args) < 2 {
				fmt.Fprintln(stderr, "setctl: -C needs a directory")
				return exitUsage
			}
			e.dir = resolveDir(e.dir, args[1])
			args = args[2:]
		case strings.HasPrefix(a, "-C="):
			e.dir = resolveDir(e.dir, strings.TrimPrefix(a, "-C="))
			args = args[1:]
		case a == "-h" || a == "--help" || a == "-help":
			printMainUsage(stdout)
			return exitOK
		case a == "--version":
			args = []string{"version"}
		default:
			fmt.Fprintf(stderr, "setctl: unknown option %s\nRun 'setctl --help' for usage.\n", a)
			return exitUsage
		}
	}
	if len(args) == 0 {
		printMainUsage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	if name == "help" {
		if len(rest) == 0 {
			printMainUsage(stdout)
			return exitOK
		}
		for _, t := range topics() {
			if t.name == rest[0] {
				fmt.Fprint(stdout, t.text())
				return exitOK
			}
		}
		name, rest = rest[0], []string{"--help"}
	}
	for _, c := range commands() {
		if c.name == name {
			if info, err := os.Stat(e.dir); err != nil || !info.IsDir() {
				fmt.Fprintf(stderr, "setctl: -C %s: not a directory\n", e.dir)
				return exitError
			}
			return c.run(e, rest)
		}
	}
	fmt.Fprintf(stderr, "setctl: unknown command %q\nRun 'setctl --help' for usage.\n", name)
	return exitUsage
}

func resolveDir(base, dir string) string {
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	return filepath.Join(base, dir)
}

func printMainUsage(w io.Writer) {
	var b strings.Builder
	cmds := commands()
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-10s  %s\n", c.name, c.summary)
	}
	var t strings.Builder
	for _, topic := range topics() {
		fmt.Fprintf(&t, "  %-10s  %s\n", topic.name, topic.summary)
	}
	fmt.Fprintf(w, mainUsage, b.String(), t.String())
}

// flagSet is a fresh flag set for one command invocation, printing its
// usage from c.usage.
func (c command) flagSet(e *env) *pflag.FlagSet {
	fs := pflag.NewFlagSet("setctl "+c.name, pflag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.SortFlags = false
	fs.Usage = func() {}
	return fs
}

// parse parses args into fs. It accepts Go-style single-dash long flags
// (-out FILE) as well as --out FILE. On --help it prints the command's
// usage to stdout and returns done; on a bad flag it prints the error and
// where the usage is (usageError) to stderr.
func (c command) parse(e *env, fs *pflag.FlagSet, args []string) (code int, done bool) {
	args = slices.Clone(args)
	for i, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(a) > 2 {
			name, _, _ := strings.Cut(a[1:], "=")
			if fs.Lookup(name) != nil {
				args[i] = "-" + a
			}
		}
	}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		c.printUsage(e.stdout, fs)
		return exitOK, true
	case err != nil:
		return c.usageError(e, "%v", err), true
	case fs.NArg() > 0 && c.arg == "":
		return c.usageError(e, "unexpected argument %q", fs.Arg(0)), true
	case fs.NArg() > 1:
		return c.usageError(e, "expected at most one %s, got %d arguments", c.arg, fs.NArg()), true
	}
	return exitOK, false
}

// usageError reports a bad flag or argument of the command, through the
// one presenter (present): the error, then one line saying where its
// usage is. It returns c.usageExit().
func (c command) usageError(e *env, format string, args ...any) int {
	e.errorf(c.name, format, args...)
	if e.diagnose == nil {
		fmt.Fprintf(e.stderr, "Run 'setctl %s --help' for usage.\n", c.name)
	}
	return c.usageExit()
}

func (c command) printUsage(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprint(w, c.usage)
	if fs.HasFlags() {
		fmt.Fprintf(w, "\nOptions:\n%s", fs.FlagUsages())
	}
}

// terminal is what output to a writer may use.
type terminal struct {
	// live: w is a terminal that can redraw lines (a tty whose TERM is
	// not "dumb").
	live bool
	// color: w is such a terminal and NO_COLOR is unset. NO_COLOR changes
	// colours only, never which lines are printed.
	color bool
}

// terminalFor is what output to w may use under the environment getenv
// reads.
func terminalFor(w io.Writer, getenv func(string) string) terminal {
	return terminalOf(isTerminal(w), getenv)
}

// isTerminal reports whether f, a stream of the process, is a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && isatty.IsTerminal(file.Fd())
}

// terminalOf is what output to a tty (or not) may use under the
// environment getenv reads.
func terminalOf(tty bool, getenv func(string) string) terminal {
	live := tty && getenv("TERM") != "dumb"
	return terminal{live: live, color: live && getenv("NO_COLOR") == ""}
}

// getenv is the value of the environment variable key, "" when unset.
func (e *env) getenv(key string) string {
	for i := len(e.environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.environ[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// errorf reports an error of command name without a position, as
// present does, and returns exitError.
func (e *env) errorf(name, format string, args ...any) int {
	return e.present(name, load.Diagnostics(fmt.Errorf(format, args...)), "")
}

// present is the one place a command shows its problems to the user: each
// diagnostic of list in its text form (diag.Diagnostic.Text), positions
// relative to root in forward slashes, after "setctl NAME: " and, for a
// warning, "warning: ", on stderr; or, when e.diagnose is set (--json),
// each as a JSON diagnostic. It returns exitError when list holds an
// error, exitOK otherwise.
func (e *env) present(name string, list diag.List, root string) int {
	for _, d := range list {
		if e.diagnose != nil {
			e.diagnose(d, root)
			continue
		}
		prefix := "setctl " + name + ": "
		if d.Severity == diag.Warning {
			prefix += "warning: "
		}
		fmt.Fprintln(e.stderr, prefix+d.Text(root))
	}
	if list.HasErrors() {
		return exitError
	}
	return exitOK
}
