package gate

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/set-engine/set/engine/english"
)

// CommandMarker starts the line an exec gate's command prints to name the
// program it runs for the gate, as the user would type it, just before it
// runs it: "[set] $ npm test". A profile's gate is a shell script that
// picks that program from the project (npm, pnpm or yarn; xo, eslint or
// biome; mypy with or without paths), and a message about the gate names
// what the last such line says (Result.Command) rather than the script.
// A gate whose output has no such line is named by CommandLine of its
// argv.
const CommandMarker = "[set] $ "

// CommandLine is argv as a message names it, one line: as a shell reader
// would type it, except that an argument of several lines (a script) is
// cut to its first line followed by "…", and what follows it left out.
// It is for reading, not for pasting into a shell.
func CommandLine(argv []string) string {
	parts := make([]string, 0, len(argv))
	for _, a := range argv {
		first, rest, multi := strings.Cut(a, "\n")
		if !multi {
			parts = append(parts, shellQuote(a))
			continue
		}
		if strings.TrimSpace(first) == "" && strings.TrimSpace(rest) != "" {
			// A script that starts with a blank line: its first line that
			// says something.
			first, _, _ = strings.Cut(strings.TrimLeft(rest, " \t\n"), "\n")
		}
		parts = append(parts, shellQuote(strings.TrimRight(first, " \t")+" …"))
		break
	}
	return strings.Join(parts, " ")
}

// missingTailLines is how many of the last lines of a failed command's
// output may say that a program is missing, when neither the exit code
// (127) nor an earlier failed gate makes it likely: the program's
// launcher stops right after saying so.
const missingTailLines = 3

// missingWhere says where in a failed command's output a missingPattern
// counts.
type missingWhere int

const (
	// lastLines: among the last missingTailLines lines that are not
	// blank, or anywhere after exit code 127 or an earlier failed gate.
	// For lines only a launcher writes: Python's -m without its module
	// ("/usr/bin/python3: No module named pytest", not a test's
	// "ModuleNotFoundError: No module named 'mypkg'"), npx refusing to
	// download, Go's os/exec.
	lastLines missingWhere = iota
	// shellSaid: anywhere, after exit code 127 (which a shell gives a
	// command it did not find) or an earlier failed gate; never
	// otherwise, since a test may print "user: not found".
	shellSaid
	// afterFailed: anywhere, only after an earlier gate of the stack
	// failed (an install, most likely): node's import of a package
	// named bare ('ava', not './foo'), which is the code's own mistake
	// when everything was installed.
	afterFailed
)

// missingPatterns are the lines that say a program (or a Python module,
// or a package) a command runs is not there. The group of a program
// pattern names the program; that of the others is the message as
// shown.
var missingPatterns = []struct {
	re      *regexp.Regexp
	program bool
	where   missingWhere
}{
	{regexp.MustCompile(`(?:^|\s)(\S+): (?:command )?not found\s*$`), true, shellSaid},
	{regexp.MustCompile(`exec: "([^"]+)": executable file not found`), true, lastLines},
	{regexp.MustCompile(`^\S*python[\d.]*: (No module named [\w.]+)\s*$`), false, lastLines},
	{regexp.MustCompile(`(npx canceled due to missing packages.*)$`), false, lastLines},
	{regexp.MustCompile(`(Cannot find (?:module|package) '[^./'][^']*')`), false, afterFailed},
}

// missingProgram says which program (or module) a command that exited with
// exitCode could not find, from tail, the end of its output: "xo: not
// found", "No module named pytest". Each pattern counts where its
// missingWhere says: after is set when an earlier gate of the stack
// failed. A line the code's own failure prints (a type error's "Cannot
// find module './foo'", a test's ModuleNotFoundError) is not one. Exit
// code 127 without such a line is said by the last line of output (a
// script's own explanation), or as such when there is none. "" when
// nothing was missing.
func missingProgram(exitCode int, tail string, after bool) string {
	wide := exitCode == 127 || after
	lines := strings.Split(strings.TrimRight(tail, "\n"), "\n")
	seen := 0
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		seen++
		for _, p := range missingPatterns {
			switch {
			case p.where == lastLines && !wide && seen > missingTailLines,
				p.where == shellSaid && !wide,
				p.where == afterFailed && !after:
				continue
			}
			m := p.re.FindStringSubmatch(l)
			switch {
			case m == nil:
				continue
			case p.program:
				return m[1] + ": not found"
			}
			return m[1]
		}
	}
	if exitCode != 127 {
		return ""
	}
	// The command's own words, when it says why (a profile's script:
	// "ruff is configured … but neither installed … nor on PATH").
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, CommandMarker) {
			return clip(l, maxQuotedLine)
		}
	}
	return "a program it runs was not found (exit code 127)"
}

// maxQuotedLine bounds a line of output a message quotes: Result.Missing,
// Result.Command.
const maxQuotedLine = 240

// Cause says why a failed exec gate could not run, as a message's clause
// after "could not run:": the program it did not find (Result.Missing)
// and the gates of its stack that failed before it on the same tree
// (Result.After), the likely reason it is missing: "xo: not found — the
// install gate failed before it". "" when nothing was missing: a gate
// that ran is not said to fail because an earlier one did, since the two
// may be unrelated (gofmt and a linter).
func Cause(missing string, after []string) string {
	if missing == "" {
		return ""
	}
	was := ""
	switch len(after) {
	case 0:
	case 1:
		was = fmt.Sprintf("the %s gate failed before it", after[0])
	default:
		was = fmt.Sprintf("the %s gates failed before it", english.List(after))
	}
	if was == "" {
		return missing
	}
	return missing + " — " + was
}

// Caused reports whether r's failure follows from something else than
// what the gate checks: a program it runs was missing (after, maybe, an
// earlier gate of its stack failed). Such a failure is reported as "could
// not run", and no failures pattern could name it.
func (r Result) Caused() bool { return r.Missing != "" }
