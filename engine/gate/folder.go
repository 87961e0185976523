package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/git"
	"github.com/set-engine/set/engine/openspec"
	"github.com/set-engine/set/engine/spec"
)

// checkFolder is what spec_verify asks, in the verify stage, of the
// change's OpenSpec change folder in the worktree, before it looks for
// tests: its delta as Input.Delta has it (checkDelta; not checked when
// Delta is nil), then its tasks.md as the gate's tasks asks (checkTasks).
// A passing verdict's detail is a note on the tasks, "" when none was
// asked for.
func checkFolder(ctx context.Context, in Input) (verdict, error) {
	if in.Delta != nil {
		if v, err := checkDelta(in); err != nil || v.fail {
			return v, err
		}
	}
	return checkTasks(ctx, in)
}

// checkTasks fails, when the gate's tasks is config.TasksAllChecked,
// while the change folder's tasks.md in the worktree has a task that is
// not checked off (openspec.Tasks: the tasks the OpenSpec CLI counts),
// whoever wrote the folder, or while it has fewer tasks than on
// Input.Base (a folder the project's people wrote is there with its
// tasks: removing them is no way to have them all checked). A folder
// without tasks.md, or a tasks.md without a task, passes when its base
// has no task either; every folder passes under TasksAny.
func checkTasks(ctx context.Context, in Input) (verdict, error) {
	if in.Project == nil || in.Project.Gates[in.Step.Gate].Tasks != config.TasksAllChecked {
		return verdict{}, nil
	}
	path := spec.ChangeDir(in.Change.Name) + "/tasks.md"
	src, err := os.ReadFile(filepath.Join(in.Worktree, filepath.FromSlash(path)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return verdict{}, err
	}
	missing := errors.Is(err, fs.ErrNotExist)
	tasks := openspec.Tasks(src)
	if in.Base != "" {
		old, err := git.FileAt(ctx, in.Worktree, in.Base, path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return verdict{}, err
		}
		if n := len(openspec.Tasks(old)); len(tasks) < n {
			return verdict{
				fail:   true,
				reason: fmt.Sprintf("%s removed from %s (%d left of the base's %d)", english.Plural(n-len(tasks), "task"), path, len(tasks), n),
				retry: fmt.Sprintf("Gate %s failed: %s has %s, and its base has %d: this project's %s asks for every task checked off (tasks: %q), not removed. "+
					"Put the tasks back as %s has them on the base, and check each off (`- [x]`) as you finish it.",
					in.Step.Gate, path, english.Plural(len(tasks), "task"), n, in.Step.Gate, config.TasksAllChecked, path),
			}, nil
		}
	}
	if missing {
		return verdict{detail: "tasks: " + path + " does not exist, so no task is to be checked off\n"}, nil
	}
	var open []string
	for _, t := range tasks {
		if !t.Done {
			open = append(open, fmt.Sprintf("%s:%d: %s", path, t.Line, clip(t.Text, 200)))
		}
	}
	if len(open) == 0 {
		return verdict{detail: fmt.Sprintf("tasks: %s checked off in %s\n", english.Plural(len(tasks), "task"), path)}, nil
	}
	return verdict{
		fail:   true,
		reason: fmt.Sprintf("%s of %d not checked off in %s (first: line %d)", english.Plural(len(open), "task"), len(tasks), path, firstOpen(tasks)),
		retry: fmt.Sprintf("Gate %s failed: %s of the %d in %s %s not checked off, and this project's %s asks for every task checked (tasks: %q):\n%s"+
			"Finish each of these tasks and check it off in %s as you do (`- [x]`).",
			in.Step.Gate, english.Plural(len(open), "task"), len(tasks), path, isAre(len(open)), in.Step.Gate, config.TasksAllChecked, bullets(open), path),
	}, nil
}

// firstOpen is the line of the first task not checked off.
func firstOpen(tasks []openspec.Task) int {
	for _, t := range tasks {
		if !t.Done {
			return t.Line
		}
	}
	return 0
}

// tracer is how spec_verify decides that an added test line names a
// requirement of the change: by its ID (containsID); with
// Input.UserFolder also by the user's own ID its title starts with
// ("REQ-LINKS-01: Create a short link"), or by its OpenSpec name, without
// that ID, case aside and with runs of white space taken as one space
// (namedIn): as whole words, and not where the line names another
// requirement of the change whose name holds this one ("Redirect" is not
// traced by "redirected", nor by "Redirect permanently" when that is
// another requirement's name).
func tracer(in Input) func(text, id string) bool {
	if !in.UserFolder {
		return containsID
	}
	type names struct{ userID, name string }
	byID := map[string]names{}
	var all []string
	for _, r := range in.Reqs {
		userID, name := leadingID(r.Title)
		byID[r.ID] = names{userID, collapse(name)}
		all = append(all, collapse(name))
	}
	return func(text, id string) bool {
		if containsID(text, id) {
			return true
		}
		n := byID[id]
		if n.userID != "" && containsID(text, n.userID) {
			return true
		}
		return n.name != "" && namedIn(collapse(text), n.name, all)
	}
}

// namedIn reports whether text names name as whole words at a place
// where no longer name of others, found there as whole words, holds it.
// text and the names are collapsed (see collapse).
func namedIn(text, name string, others []string) bool {
	for _, i := range wordsAt(text, name) {
		covered := false
		for _, o := range others {
			if len(o) <= len(name) || !strings.Contains(o, name) {
				continue
			}
			for _, j := range wordsAt(text, o) {
				if j <= i && i+len(name) <= j+len(o) {
					covered = true
				}
			}
		}
		if !covered {
			return true
		}
	}
	return false
}

// wordsAt is the byte offsets where name occurs in text as whole words:
// neither a letter nor a digit touches it on a side where name itself
// begins or ends with one.
func wordsAt(text, name string) []int {
	var at []int
	for from := 0; from <= len(text)-len(name); {
		i := strings.Index(text[from:], name)
		if i < 0 {
			break
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(name):])
		first, _ := utf8.DecodeRuneInString(name)
		last, _ := utf8.DecodeLastRuneInString(name)
		if !(isWord(first) && isWord(before) || isWord(last) && isWord(after)) {
			at = append(at, i)
		}
		from = i + 1
	}
	return at
}

// isWord reports whether r is a letter or a digit (utf8.RuneError, for
// the start or end of a text, is neither).
func isWord(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// leadingID splits an OpenSpec requirement name into the requirement ID
// it starts with, if any ("REQ-LINKS-01", also in bold), and the rest,
// without the separator (": ", " - ", " — ").
func leadingID(title string) (id, rest string) {
	s := strings.TrimPrefix(title, "**")
	end := strings.IndexFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ':' || r == '*' || r == ','
	})
	if end < 0 {
		end = len(s)
	}
	if !spec.IDPattern.MatchString(s[:end]) {
		return "", title
	}
	return s[:end], strings.TrimLeft(s[end:], " \t:*,-—–")
}

// collapse is s in lower case with each run of white space one space,
// trimmed.
func collapse(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}
