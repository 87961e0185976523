// Package testconfig reads, without running anything, the globs of test
// files that a project's test runners are configured with (jest's
// testMatch and roots, vitest's test.include, ava's files, mocha's spec),
// so that the files the runner runs count as tests (testPatterns) even
// where the runner's defaults do not find them.
//
// Invariants:
//   - Nothing is run or evaluated: JSON and YAML files are parsed; a
//     JavaScript or TypeScript configuration is read only where it
//     exports an object literal (module.exports = {…}, export default
//     {…}, defineConfig({…}), or a const they name) and the property,
//     one of that object's own (not of a nested one: jest's projects), is
//     a string literal or an array of string literals; anything else is
//     reported in Found.Unread, never guessed.
//   - Configuration files are read at the project's root, in the order the
//     runner looks for them; the first that exists is the runner's, as it
//     is for the runner.
//   - Globs only add test files: what a runner excludes ("!…", jest's
//     testPathIgnorePatterns) is not read, and a runner glob set's globs
//     cannot express (a regular expression: jest's testRegex) is reported
//     as unread.
package testconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/git"
)

// ReadFunc returns the content of a file of the project's tree (a slash
// path relative to its root); an error wrapping fs.ErrNotExist when there
// is none.
type ReadFunc func(name string) ([]byte, error)

// Dir reads the files of the directory dir, never outside it (os.Root):
// the project's tree as it is, which setctl doctor describes.
func Dir(dir string) ReadFunc {
	return func(name string) ([]byte, error) {
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, err
		}
		defer root.Close()
		return root.ReadFile(name)
	}
}

// At reads the files of the tree of commit rev of the repository at dir.
func At(ctx context.Context, dir, rev string) ReadFunc {
	return func(name string) ([]byte, error) { return git.FileAt(ctx, dir, rev, name) }
}

// Glob is a glob of test files (engine/pathglob) and where it was read.
type Glob struct {
	Pattern string
	// From is the file and the property it was read from
	// ("package.json jest.testMatch").
	From string
}

// Found is what Read found.
type Found struct {
	// Globs are the globs of test files the configurations name, in the
	// order of the runners and of their values.
	Globs []Glob
	// Unread says, one line each, what a configuration holds that set
	// did not read, and why ("jest.config.ts testMatch: not a string
	// literal or a list of string literals").
	Unread []string
}

// Patterns is the globs of f, each once, sorted.
func (f Found) Patterns() []string {
	var out []string
	for _, g := range f.Globs {
		out = append(out, g.Pattern)
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// TestGlobs is p's globs of test files in the tree read reads: its
// testPatterns and those its test runners' configurations name (Read of
// p.TestRunnerList()), each once, sorted. A configuration that cannot be
// read adds nothing.
func TestGlobs(p *config.Project, read ReadFunc) []string {
	globs := p.TestGlobs()
	if runners := p.TestRunnerList(); len(runners) > 0 {
		globs = append(globs, Read(runners, read).Patterns()...)
	}
	return slices.Compact(slices.Sorted(slices.Values(globs)))
}

// Read reads the configurations of runners (the names of schema's
// #TestRunner: "ava", "jest", "mocha", "vitest") in the tree read reads.
// An unknown runner is reported as unread.
func Read(runners []string, read ReadFunc) Found {
	var f Found
	for _, r := range runners {
		switch r {
		case "jest":
			f.jest(read)
		case "vitest":
			f.vitest(read)
		case "ava":
			f.ava(read)
		case "mocha":
			f.mocha(read)
		default:
			f.Unread = append(f.Unread, fmt.Sprintf("test runner %q: set reads the configuration of ava, jest, mocha and vitest only", r))
		}
	}
	return f
}

// source is the configuration file a runner uses: the first of files
// that exists, else package.json when it has the property pkgKey; ""
// when there is none. data is its content.
func source(read ReadFunc, files []string, pkgKey string) (name string, data []byte, prefix []string) {
	for _, name := range files {
		if data, err := read(name); err == nil {
			return name, data, nil
		}
	}
	if pkgKey == "" {
		return "", nil, nil
	}
	data, err := read("package.json")
	if err != nil {
		return "", nil, nil
	}
	var pkg map[string]json.RawMessage
	if json.Unmarshal(data, &pkg) != nil || pkg[pkgKey] == nil {
		return "", nil, nil
	}
	return "package.json", data, []string{pkgKey}
}

// value reads the property path of the configuration file name: found
// is false when it does not set it; err says why its value cannot be
// read.
func value(name string, data []byte, path []string) (values []string, found bool, err error) {
	switch {
	case strings.HasSuffix(name, ".json"):
		var doc any
		err := json.Unmarshal(data, &doc)
		switch {
		case err == nil:
			return docStrings(doc, path)
		case strings.HasPrefix(name, ".mocharc"):
			// mocha reads its .json as it reads .jsonc: comments allowed.
			return jsStrings(tokens(string(data)), path)
		}
		return nil, false, fmt.Errorf("not valid JSON: %v", err)
	case strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml"):
		var doc any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, false, fmt.Errorf("not valid YAML: %v", err)
		}
		return docStrings(doc, path)
	}
	return jsStrings(tokens(string(data)), path)
}

// docStrings reads the property path of a parsed JSON or YAML document.
func docStrings(doc any, path []string) ([]string, bool, error) {
	for _, key := range path {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		if doc, ok = m[key]; !ok {
			return nil, false, nil
		}
	}
	switch v := doc.(type) {
	case string:
		return []string{v}, true, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, true, errors.New("not a string or a list of strings")
			}
			out = append(out, s)
		}
		return out, true, nil
	}
	return nil, true, errors.New("not a string or a list of strings")
}

// ava reads ava's files from ava.config.* or package.json's ava.
func (f *Found) ava(read ReadFunc) {
	name, data, prefix := source(read, []string{"ava.config.js", "ava.config.cjs", "ava.config.mjs"}, "ava")
	if name == "" {
		return
	}
	f.globs(name, data, append(prefix, "files"), func(g string) []string { return []string{g} })
}

// globs reads the globs of property key of the configuration file name
// and adds place's globs for each.
func (f *Found) globs(name string, data []byte, key []string, place func(string) []string) {
	from := name + " " + strings.Join(key, ".")
	values, found, err := value(name, data, key)
	switch {
	case err != nil:
		f.Unread = append(f.Unread, from+": "+err.Error()+unreadAdvice)
		return
	case !found:
		return
	}
	for _, v := range values {
		for _, g := range place(v) {
			expanded, err := expand(g)
			var excl *excludes
			switch {
			case errors.As(err, &excl):
				f.Unread = append(f.Unread, from+": "+err.Error())
				continue
			case err != nil:
				f.Unread = append(f.Unread, from+": "+err.Error()+unreadAdvice)
				continue
			}
			for _, e := range expanded {
				f.Globs = append(f.Globs, Glob{Pattern: e, From: from})
			}
		}
	}
}

// unreadAdvice ends a line of Found.Unread about globs set did not read.
const unreadAdvice = ", so set does not read it: the tests count where testPatterns match them (add theirs in set.cue)"

// jest reads jest's testMatch, under each of its roots, from
// jest.config.* or package.json's jest; its testRegex and projects are
// reported as unread.
func (f *Found) jest(read ReadFunc) {
	name, data, prefix := source(read, []string{"jest.config.js", "jest.config.ts", "jest.config.mjs", "jest.config.cjs", "jest.config.cts", "jest.config.json"}, "jest")
	if name == "" {
		return
	}
	at := func(key string) []string { return append(slices.Clone(prefix), key) }
	if _, _, err := value(name, data, at("testMatch")); errors.Is(err, errNoObject) {
		f.Unread = append(f.Unread, name+": "+err.Error()+unreadAdvice)
		return
	}
	if _, found, _ := value(name, data, at("projects")); found {
		f.Unread = append(f.Unread, name+" "+strings.Join(at("projects"), ".")+": the projects' own configurations"+unreadAdvice)
	}
	if _, found, _ := value(name, data, at("testRegex")); found {
		f.Unread = append(f.Unread, name+" "+strings.Join(at("testRegex"), ".")+": a regular expression, which set's globs cannot express"+unreadAdvice)
	}
	roots, _, err := value(name, data, at("roots"))
	if err != nil {
		f.Unread = append(f.Unread, name+" "+strings.Join(at("roots"), ".")+": "+err.Error()+unreadAdvice)
		roots = nil
	}
	for i, r := range roots {
		roots[i] = strings.Trim(strings.TrimPrefix(r, "<rootDir>"), "/")
	}
	f.globs(name, data, at("testMatch"), func(g string) []string {
		if rooted, ok := strings.CutPrefix(g, "<rootDir>/"); ok || len(roots) == 0 {
			return []string{rooted}
		}
		var out []string
		for _, r := range roots {
			out = append(out, path.Join(r, g))
		}
		return out
	})
}

// vitest reads vitest's test.include, under test.dir when it is a string
// literal, from vitest.config.* or else vite.config.*.
func (f *Found) vitest(read ReadFunc) {
	var files []string
	for _, base := range []string{"vitest.config", "vite.config"} {
		for _, ext := range []string{".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"} {
			files = append(files, base+ext)
		}
	}
	name, data, _ := source(read, files, "")
	if name == "" {
		return
	}
	dir := ""
	switch d, found, err := value(name, data, []string{"test", "dir"}); {
	case errors.Is(err, errNoObject): // test.include says so
	case err == nil && found && len(d) == 1:
		dir = strings.TrimPrefix(d[0], "./")
	case found:
		f.Unread = append(f.Unread, name+" test.dir: "+errNotLiteral.Error()+unreadAdvice)
	}
	f.globs(name, data, []string{"test", "include"}, func(g string) []string { return []string{path.Join(dir, g)} })
}

// mocha reads mocha's spec from .mocharc.* or package.json's mocha: a
// directory (an entry without glob characters or extension) counts
// with everything under it.
func (f *Found) mocha(read ReadFunc) {
	name, data, prefix := source(read, []string{".mocharc.js", ".mocharc.cjs", ".mocharc.yaml", ".mocharc.yml", ".mocharc.jsonc", ".mocharc.json"}, "mocha")
	if name == "" {
		return
	}
	f.globs(name, data, append(prefix, "spec"), func(g string) []string {
		if !strings.ContainsAny(g, "*?[{(") && path.Ext(g) == "" {
			return []string{path.Join(g, "**")}
		}
		return []string{g}
	})
}
