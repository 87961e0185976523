package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/english"
	"github.com/set-engine/set/engine/graph"
	"github.com/set-engine/set/engine/rundir"
	"github.com/set-engine/set/engine/spec"
	"github.com/set-engine/set/engine/testconfig"
)

// listCap bounds every list of paths or findings in a retry context.
const listCap = 50

// docsType is the change type allowed to touch only documentation.
const docsType = "docs"

// isArtifact reports whether a path is a description of work rather than
// the work: specs under openspec/, run state under .set/, markdown files.
func isArtifact(name string) bool {
	return strings.HasPrefix(name, "openspec/") || strings.HasPrefix(name, rundir.Name+"/") ||
		strings.HasSuffix(strings.ToLower(name), ".md")
}

// scopeCheck fails when the change touches no file; when it adds a
// symbolic link (set does not follow links a change adds: one could point
// the archive or a gate outside the project); when a change of a
// type other than docs touches only artifacts (isArtifact); or when the
// change has a scope and touches a path outside it. Paths under openspec/
// (the change's own spec delta) and the project's generated files
// (lockfiles the engine regenerates) are always in scope.
func scopeCheck(ctx context.Context, in Input, d *changeDiff) (verdict, error) {
	files, err := d.files(ctx)
	if err != nil {
		return verdict{}, err
	}
	if len(files) == 0 {
		return verdict{
			fail:   true,
			reason: "the change touches no file",
			retry: fmt.Sprintf("Gate %s failed: the change touches no file (nothing differs from the base commit %s).\n"+
				"Make the changes the task asks for in this worktree.", in.Step.Gate, short(in.Base)),
		}, nil
	}
	links, err := d.links(ctx)
	if err != nil {
		return verdict{}, err
	}
	if len(links) > 0 {
		reason := links[0] + " is a symbolic link; set does not follow links a change adds"
		if len(links) > 1 {
			reason = fmt.Sprintf("%d files are symbolic links (first: %s); set does not follow links a change adds", len(links), links[0])
		}
		return verdict{
			fail:   true,
			reason: reason,
			retry: fmt.Sprintf("Gate %s failed: the change adds symbolic links, and set does not follow links a change adds:\n%s"+
				"Replace each link with the file or directory it should hold, or remove it.", in.Step.Gate, bullets(links)),
		}, nil
	}
	if in.Change.Type != docsType && !slices.ContainsFunc(files, func(f string) bool { return !isArtifact(f) }) {
		return verdict{
			fail:   true,
			reason: "the change touches only artifacts (openspec/, .set/, markdown)",
			retry: fmt.Sprintf("Gate %s failed: the change touches only specs and documentation "+
				"(files under openspec/ or .set/, and markdown files), but a %s change must change at least one other file, such as code or tests.\n"+
				"Changed files:\n%s"+
				"Implement the change itself, not only its description.", in.Step.Gate, in.Change.Type, bullets(files)),
		}, nil
	}
	scope := in.Change.Scope
	if len(scope) == 0 {
		return verdict{detail: "no scope declared; changed files:\n" + bullets(files)}, nil
	}
	var outside []string
	for _, f := range files {
		if !inScope(scope, f) && !strings.HasPrefix(f, "openspec/") && !isGenerated(in, f) {
			outside = append(outside, f)
		}
	}
	if len(outside) == 0 {
		return verdict{detail: "scope:\n" + bullets(scope) + "changed files:\n" + bullets(files)}, nil
	}
	return verdict{
		fail:   true,
		reason: fmt.Sprintf("%s outside the scope: %s", english.Plural(len(outside), "file"), preview(outside, 3)),
		retry: fmt.Sprintf("Gate %s failed: the change touches %s outside its scope.\n"+
			"Outside the scope:\n%s"+
			"The change may only touch paths matching:\n%s"+
			"Undo the changes to the files outside the scope (restore edited or deleted files as they are at %s, remove added ones), "+
			"or move that work inside the scope.", in.Step.Gate, english.Plural(len(outside), "file"), bullets(outside), bullets(scope), short(in.Base)),
	}, nil
}

func isGenerated(in Input, name string) bool {
	if in.Project == nil {
		return false
	}
	for g := range in.Project.Generated {
		if matchGlob(g, name) {
			return true
		}
	}
	return false
}

// testFiles fails unless the change adds or modifies (not only deletes) a
// file matching the project's testPatterns, or adds a line its
// inlineTests count as a test.
func testFiles(ctx context.Context, in Input, d *changeDiff) (verdict, error) {
	patterns, rules := testPatterns(ctx, in), inlineRules(in.Project)
	if len(patterns) == 0 && len(rules) == 0 {
		return verdict{}, errors.New("the project declares no testPatterns or inlineTests, and its test runners name no test files, so no file counts as a test")
	}
	st, err := d.statuses(ctx)
	if err != nil {
		return verdict{}, err
	}
	var tests, deleted []string
	for _, s := range st {
		if !matchAny(patterns, s.Path) {
			continue
		}
		if s.Status == 'D' {
			deleted = append(deleted, s.Path)
		} else {
			tests = append(tests, s.Path)
		}
	}
	if len(tests) > 0 {
		return verdict{detail: "test files added or modified:\n" + bullets(tests)}, nil
	}
	if len(rules) > 0 {
		files, err := d.added(ctx)
		if err != nil {
			return verdict{}, err
		}
		inline, err := inlineTestLines(rules, patterns, d.dir, files)
		if err != nil {
			return verdict{}, err
		}
		if len(inline) > 0 {
			var where []string
			for _, f := range inline {
				where = append(where, fmt.Sprintf("%s (%s)", f.Path, english.Plural(len(f.Added), "line")))
			}
			return verdict{detail: "inline test lines added:\n" + bullets(where)}, nil
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Gate %s failed: the change adds or modifies no test file. Test files are those matching:\n%s", in.Step.Gate, bullets(patterns))
	if len(rules) > 0 {
		fmt.Fprintf(&b, "Tests written inline count too: %s.\n", describeInline(rules))
	}
	if len(deleted) > 0 {
		fmt.Fprintf(&b, "The change only deletes test files:\n%s", bullets(deleted))
	}
	b.WriteString("Add or extend the tests that cover this change.")
	return verdict{fail: true, reason: "no test file added or modified", retry: b.String()}, nil
}

// specVerify fails, in the verify stage, when the change's delta specs
// are not the ones set wrote (Input.Delta), or with Input.UserFolder not
// the ones the project's people wrote on main: the agent may refine the
// tasks, never the requirements; and, with the gate's tasks
// "all-checked", while the folder's tasks.md has an unchecked task (see
// checkFolder). Then it fails unless every requirement of the change that
// the spec did not remove is named in a line the change adds to a test
// file (see tracer).
func specVerify(ctx context.Context, in Input, d *changeDiff) (verdict, error) {
	note := ""
	if in.Stage == graph.StageVerify {
		v, err := checkFolder(ctx, in)
		if err != nil || v.fail {
			return v, err
		}
		note = v.detail
	}
	v, err := traceRequirements(ctx, in, d)
	if note != "" && err == nil && !v.fail {
		v.detail = note + v.detail
	}
	return v, err
}

// traceRequirements fails unless every requirement of the change that
// the spec did not remove is named in a line the change adds to a test
// file.
func traceRequirements(ctx context.Context, in Input, d *changeDiff) (verdict, error) {
	ids := slices.DeleteFunc(dedupe(in.Change.Requirements), func(id string) bool { return slices.Contains(in.Removing, id) })
	if len(ids) == 0 {
		return verdict{detail: "the change has no requirements a test must name"}, nil
	}
	patterns, rules := testPatterns(ctx, in), inlineRules(in.Project)
	if len(patterns) == 0 && len(rules) == 0 {
		return verdict{}, errors.New("the project declares no testPatterns or inlineTests, and its test runners name no test files, so no test can name a requirement")
	}
	files, err := d.added(ctx)
	if err != nil {
		return verdict{}, err
	}
	inline, err := inlineTestLines(rules, patterns, d.dir, files)
	if err != nil {
		return verdict{}, err
	}
	var tests []fileDiff // the added test lines: of test files, then inline
	for _, f := range files {
		if matchAny(patterns, f.Path) {
			tests = append(tests, f)
		}
	}
	tests = append(tests, inline...)
	traces := tracer(in)
	found := map[string]string{} // ID → file:line of its first mention
	for _, f := range tests {
		for _, l := range f.Added {
			for _, id := range ids {
				if _, ok := found[id]; !ok && traces(l.Text, id) {
					found[id] = fmt.Sprintf("%s:%d", f.Path, l.Line)
				}
			}
		}
	}
	var missing, lines []string
	for _, id := range ids {
		if at, ok := found[id]; ok {
			lines = append(lines, id+": "+at)
			continue
		}
		missing = append(missing, id)
	}
	if len(missing) == 0 {
		return verdict{detail: "requirements named by added test lines:\n" + bullets(lines)}, nil
	}
	described := make([]string, len(missing))
	for i, id := range missing {
		described[i] = id
		for _, r := range in.Reqs {
			if r.ID == id && r.Title != "" {
				described[i] = id + ": " + r.Title
				if in.UserFolder {
					described[i] = fmt.Sprintf("%s = %q", id, r.Title)
				}
				break
			}
		}
	}
	head := fmt.Sprintf("Gate %s failed: %d of the change's %d requirements %s not named by any test line this change adds:\n%s",
		in.Step.Gate, len(missing), len(ids), isAre(len(missing)), bullets(described))
	example := fmt.Sprintf("a comment `// %s` in the test, or %s in the test's name", missing[0], strings.ReplaceAll(missing[0], "-", "_"))
	how := fmt.Sprintf("Name each ID in the test that covers it, in a line the change adds to %s — for example %s.", testPlaces(patterns, rules), example)
	if in.UserFolder {
		how = fmt.Sprintf("Name each requirement in the test that covers it, in a line the change adds to %s: its ID (for example %s) or its OpenSpec name, as its heading in %s/specs/ has it.",
			testPlaces(patterns, rules), example, spec.ChangeDir(in.Change.Name))
	}
	return verdict{fail: true, reason: "requirements not referenced by a test: " + strings.Join(missing, ", "), retry: head + how}, nil
}

// checkDelta compares the delta specs in the change's folder in the
// worktree, openspec/changes/<change>/specs/ (and its .openspec.yaml with
// Input.UserFolder), with Input.Delta: the ones set wrote, or the ones the
// project's people wrote on main.
func checkDelta(in Input) (verdict, error) {
	dir := spec.ChangeDir(in.Change.Name)
	found := map[string][]byte{}
	root := filepath.Join(in.Worktree, filepath.FromSlash(dir))
	err := filepath.WalkDir(filepath.Join(root, "specs"), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		found[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return verdict{}, err
	}
	if in.UserFolder {
		data, err := os.ReadFile(filepath.Join(root, MetadataFile))
		switch {
		case err == nil:
			found[MetadataFile] = data
		case !errors.Is(err, fs.ErrNotExist):
			return verdict{}, err
		}
	}
	words := setDeltaWords
	if in.UserFolder {
		words = userDeltaWords
	}
	var problems []string
	var want strings.Builder
	for _, name := range slices.Sorted(maps.Keys(in.Delta)) {
		data, ok := found[name]
		switch {
		case !ok:
			problems = append(problems, dir+"/"+name+words.missing)
		case !bytes.Equal(data, in.Delta[name]):
			problems = append(problems, dir+"/"+name+words.differs)
		default:
			continue
		}
		fmt.Fprintf(&want, "--- %s/%s ---\n%s", dir, name, clip(string(in.Delta[name]), 4000))
	}
	for _, name := range slices.Sorted(maps.Keys(found)) {
		if _, ok := in.Delta[name]; !ok {
			problems = append(problems, dir+"/"+name+" was added")
		}
	}
	if len(problems) == 0 {
		return verdict{detail: words.same + ":\n" + bullets(prefixed(dir+"/", slices.Sorted(maps.Keys(in.Delta))))}, nil
	}
	if in.UserFolder {
		return verdict{
			fail:   true,
			reason: "the change edits the delta specs the project's people wrote: " + preview(problems, 3),
			retry: fmt.Sprintf("Gate %s failed: the change edits the OpenSpec change %s/ that the project's people wrote: its delta specs (specs/) and .openspec.yaml are theirs, on %s, and must stay as they wrote them:\n%s"+
				"They say what the change is to do: implement them, never rewrite them. You may check tasks off in tasks.md. Put these files back as they are on %s (and remove any other file you added under %s/specs/):\n%s",
				in.Step.Gate, dir, mainBranch(in), bullets(problems), mainBranch(in), dir, want.String()),
		}, nil
	}
	return verdict{
		fail:   true,
		reason: "the delta specs are not the ones set wrote: " + preview(problems, 3),
		retry: fmt.Sprintf("Gate %s failed: the change's delta specs are not the ones set wrote from the spec and main's living specs:\n%s"+
			"A change may refine tasks.md and proposal.md, never its requirements. Put the delta specs back as set wrote them (and remove any other file under %s/specs/):\n%s",
			in.Step.Gate, bullets(problems), dir, want.String()),
	}, nil
}

// deltaWords is how checkDelta says a file of the delta stands.
type deltaWords struct{ missing, differs, same string }

var (
	setDeltaWords  = deltaWords{" is missing", " differs from what set wrote", "the delta specs are the ones set wrote"}
	userDeltaWords = deltaWords{" was removed", " was edited", "the delta specs and .openspec.yaml are the ones the project's people wrote"}
)

// MetadataFile is an OpenSpec change folder's metadata, which steers its
// archive (skip_specs, retire_capabilities): part of the delta of a folder
// the project's people wrote (Input.UserFolder).
const MetadataFile = ".openspec.yaml"

// mainBranch is the project's main branch as a message names it.
func mainBranch(in Input) string {
	if in.Project == nil || in.Project.MainBranch == "" {
		return "main"
	}
	return in.Project.MainBranch
}

func prefixed(prefix string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = prefix + x
	}
	return out
}

// containsID reports whether text names the requirement id, written as is
// or with "-" replaced by "_" (so that it can be part of an identifier,
// e.g. TestREQ_AUTH_01). The ID must not run on into a letter or digit, so
// REQ-AUTH-1 is not found in REQ-AUTH-10.
func containsID(text, id string) bool {
	for _, form := range []string{id, strings.ReplaceAll(id, "-", "_")} {
		rest := text
		for {
			i := strings.Index(rest, form)
			if i < 0 {
				break
			}
			after := rest[i+len(form):]
			if r, _ := utf8.DecodeRuneInString(after); after == "" || !isAlnum(r) {
				return true
			}
			rest = rest[i+1:]
		}
	}
	return false
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// rules fails when a line the change adds matches a forbidden pattern of
// the project or an adopted rule learning (config.Project.Rules;
// restricted to the rule's paths when it has any). A learning's finding
// names it "learning NAME", its message the learning's text.
func rules(ctx context.Context, in Input, d *changeDiff) (verdict, error) {
	type rule struct {
		name, message string
		re            *regexp.Regexp
		paths         []string
	}
	var rs []rule
	if in.Project != nil {
		for _, r := range in.Project.Rules() {
			re, err := regexp.Compile(r.Pattern)
			if err != nil {
				return verdict{}, fmt.Errorf("forbidden rule %q: bad pattern: %w", r.Name, err)
			}
			rs = append(rs, rule{r.Name, r.Message, re, r.Paths})
		}
	}
	if len(rs) == 0 {
		return verdict{detail: "the project forbids no pattern"}, nil
	}
	files, err := d.added(ctx)
	if err != nil {
		return verdict{}, err
	}
	var hits []string
	first := ""
	// Findings come in diff order: by file, then line, then rule name.
	for _, f := range files {
		for _, l := range f.Added {
			for _, r := range rs {
				if len(r.paths) > 0 && !matchAny(r.paths, f.Path) || !r.re.MatchString(l.Text) {
					continue
				}
				if first == "" {
					first = fmt.Sprintf("%s:%d: %s", f.Path, l.Line, r.name)
				}
				hits = append(hits, fmt.Sprintf("%s:%d: %s: %s: %s", f.Path, l.Line, r.name, r.message, clip(strings.TrimSpace(l.Text), 200)))
			}
		}
	}
	if len(hits) == 0 {
		return verdict{detail: fmt.Sprintf("%s checked against %d added files", english.Plural(len(rs), "rule"), len(files))}, nil
	}
	return verdict{
		fail:   true,
		reason: fmt.Sprintf("%s of forbidden patterns in added lines (first: %s)", english.Plural(len(hits), "match"), first),
		retry: fmt.Sprintf("Gate %s failed: lines this change adds match forbidden patterns:\n%s"+
			"Remove or rewrite these lines.", in.Step.Gate, bullets(hits)),
	}, nil
}

// TestFiles is the paths (slash paths relative to the repository's top)
// that globs (TestGlobs) count as tests, in their order: what the
// test_files and spec_verify gates count as a test file; empty, not nil,
// when none does.
func TestFiles(globs, paths []string) []string {
	tests := []string{}
	for _, name := range paths {
		if matchAny(globs, name) {
			tests = append(tests, name)
		}
	}
	return tests
}

// testPlaces names where tests are, for a gate's message ("a line the
// change adds to …"): a file matching the test patterns, or the inline
// tests' places.
func testPlaces(patterns []string, rules []inlineRule) string {
	var places []string
	if len(patterns) > 0 {
		places = append(places, "a file matching "+strings.Join(patterns, ", "))
	}
	if len(rules) > 0 {
		places = append(places, describeInline(rules))
	}
	return strings.Join(places, ", or to ")
}

// TestGlobs is the globs of the files p counts as tests in the tree of
// commit rev of the repository at dir: its testPatterns and what its
// test runners' configuration there names (engine/testconfig).
func TestGlobs(ctx context.Context, p *config.Project, dir, rev string) []string {
	return testconfig.TestGlobs(p, testconfig.At(ctx, dir, rev))
}

// testPatterns is the globs of the files in's project counts as tests:
// its testPatterns and what its test runners' configuration names on the
// commit the change is compared with (in.Base), not in the change's
// worktree, so that a change cannot widen what counts as its own tests
// (a testMatch of "**/*"), as set.cue's testPatterns come from main too.
func testPatterns(ctx context.Context, in Input) []string {
	if in.Project == nil {
		return nil
	}
	return TestGlobs(ctx, in.Project, in.Worktree, in.Base)
}

// bullets lists items one per line ("  - item\n"), at most listCap of them.
func bullets(items []string) string {
	var b strings.Builder
	for i, it := range items {
		if i == listCap {
			fmt.Fprintf(&b, "  … and %d more\n", len(items)-listCap)
			break
		}
		b.WriteString("  - " + it + "\n")
	}
	return b.String()
}

func preview(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + ", …"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

func dedupe(ids []string) []string {
	var out []string
	for _, id := range ids {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
