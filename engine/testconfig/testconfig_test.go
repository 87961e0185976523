package testconfig

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// tree reads the files of a map.
func tree(files map[string]string) ReadFunc {
	return func(name string) ([]byte, error) {
		if data, ok := files[name]; ok {
			return []byte(data), nil
		}
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
}

var allRunners = []string{"jest", "vitest", "ava", "mocha"}

// TestRead: each runner's test globs are read from where the runner
// looks for its configuration, the first file it finds winning, and set's
// globs express them; what cannot be read without running the
// configuration is said, never guessed.
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  map[string]string
		globs  []string // "pattern < from"
		unread []string // substrings, in order
	}{
		{"nothing configured", map[string]string{"package.json": `{"name": "x", "scripts": {"test": "jest"}}`}, nil, nil},
		{"jest testMatch in package.json", map[string]string{"package.json": `{"jest": {"testMatch": ["**/specs/**/*.[jt]s?(x)"]}}`},
			[]string{"**/specs/**/*.[jt]s < package.json jest.testMatch", "**/specs/**/*.[jt]sx < package.json jest.testMatch"}, nil},
		{"jest's default testMatch", map[string]string{"jest.config.json": `{"testMatch": ["**/?(*.)+(spec|test).js"]}`},
			[]string{"**/spec.js < jest.config.json testMatch", "**/test.js < jest.config.json testMatch", "**/*.spec.js < jest.config.json testMatch", "**/*.test.js < jest.config.json testMatch"}, nil},
		{"jest roots and testMatch in jest.config.js", map[string]string{
			"jest.config.js": "// Jest.\nmodule.exports = {\n  roots: ['<rootDir>/src', '<rootDir>/lib/'],\n  testMatch: ['**/*.check.js', \"<rootDir>/e2e/*.js\"], // tests\n};\n",
			"package.json":   `{"jest": {"testMatch": ["ignored/**"]}}`},
			[]string{"src/**/*.check.js < jest.config.js testMatch", "lib/**/*.check.js < jest.config.js testMatch", "e2e/*.js < jest.config.js testMatch"}, nil},
		{"jest testRegex", map[string]string{"jest.config.ts": "export default {testRegex: '(/__tests__/.*|\\\\.spec)\\\\.ts$'}\n"},
			nil, []string{"jest.config.ts testRegex: a regular expression"}},
		{"jest testMatch from a variable", map[string]string{"jest.config.js": "const m = ['**/*.t.js'];\nmodule.exports = {testMatch: m};\n"},
			nil, []string{"jest.config.js testMatch: not a string literal or a list of string literals"}},
		{"jest projects", map[string]string{"jest.config.js": `module.exports = {
  projects: [
    {displayName: 'tests', testMatch: ['<rootDir>/src/**/*.spec.js']},
    {displayName: 'lint', runner: 'jest-runner-eslint', testMatch: ['<rootDir>/**/*.js']},
  ],
};
`}, nil, []string{"jest.config.js projects: the projects' own configurations, so set does not read it"}},
		{"jest configuration in a const", map[string]string{"jest.config.ts": "import type {Config} from 'jest';\n\nconst config: Config = {\n  testMatch: ['**/*.check.ts'],\n};\n\nexport default config;\n"},
			[]string{"**/*.check.ts < jest.config.ts testMatch"}, nil},
		{"jest configuration from a function", map[string]string{"jest.config.js": "module.exports = async () => ({testMatch: ['x/**'], testRegex: 'y'});\n"},
			nil, []string{"jest.config.js: its configuration is not an object literal"}},
		{"vitest configuration from a function", map[string]string{"vitest.config.ts": "export default defineConfig(({mode}) => ({test: {include: ['x/**']}}));\n"},
			nil, []string{"vitest.config.ts test.include: its configuration is not an object literal"}},
		{"vitest test.include, not coverage.include", map[string]string{"vitest.config.ts": `import {defineConfig} from 'vitest/config';
export default defineConfig({
	plugins: [x({include: ['nope/**'], test: /\.svg$/})],
	test: {
		coverage: {include: ['src/**']},
		include: ['spec/**/*.{spec,test}.ts'] as const,
	},
});
`}, []string{"spec/**/*.spec.ts < vitest.config.ts test.include", "spec/**/*.test.ts < vitest.config.ts test.include"}, nil},
		{"vitest in vite.config with test.dir", map[string]string{"vite.config.mjs": "export default {test: {dir: './packages', include: ['**/*.check.js']}}\n"},
			[]string{"packages/**/*.check.js < vite.config.mjs test.include"}, nil},
		{"vite.config without test", map[string]string{"vite.config.ts": "export default {build: {include: ['src/**']}}\n"}, nil, nil},
		{"ava files in package.json", map[string]string{"package.json": `{"ava": {"files": ["test/**/*.js", "!test/helpers/**"]}}`},
			[]string{"test/**/*.js < package.json ava.files"}, []string{`package.json ava.files: "!test/helpers/**" excludes files`}},
		{"ava.config.js", map[string]string{"ava.config.js": "export default {\n\tfiles: ['source/**/*.spec.js'],\n};\n"},
			[]string{"source/**/*.spec.js < ava.config.js files"}, nil},
		{"mocha spec, a directory, in .mocharc.yml", map[string]string{".mocharc.yml": "require: ts-node/register\nspec:\n  - spec\n  - 'it/**/*.mjs'\n"},
			[]string{"spec/** < .mocharc.yml spec", "it/**/*.mjs < .mocharc.yml spec"}, nil},
		{"mocha spec in .mocharc.jsonc", map[string]string{".mocharc.jsonc": "{\n  // the specs\n  \"spec\": \"checks/*.spec.js\"\n}\n"},
			[]string{"checks/*.spec.js < .mocharc.jsonc spec"}, nil},
		{"mocha spec in package.json", map[string]string{"package.json": `{"mocha": {"spec": "./unit"}}`},
			[]string{"unit/** < package.json mocha.spec"}, nil},
		{"a runner's configuration that is not JSON", map[string]string{"jest.config.json": `{"testMatch": `},
			nil, []string{"jest.config.json roots: not valid JSON", "jest.config.json testMatch: not valid JSON"}},
		{"mocha spec in a .mocharc.json with comments, as mocha reads it", map[string]string{".mocharc.json": "{\n  // the specs\n  \"spec\": \"checks/*.spec.js\"\n}\n"},
			[]string{"checks/*.spec.js < .mocharc.json spec"}, nil},
		{"jest testMatch as a shorthand property", map[string]string{"jest.config.js": "const testMatch = ['**/*.t.js'];\nmodule.exports = {verbose: true, testMatch};\n"},
			nil, []string{"jest.config.js testMatch: not a string literal or a list of string literals"}},
	} {
		f := Read(allRunners, tree(tc.files))
		var got []string
		for _, g := range f.Globs {
			got = append(got, g.Pattern+" < "+g.From)
		}
		if !slices.Equal(got, tc.globs) {
			t.Errorf("%s: globs\n%q\nwant\n%q", tc.name, got, tc.globs)
		}
		if len(f.Unread) != len(tc.unread) {
			t.Errorf("%s: unread %q, want %d lines like %q", tc.name, f.Unread, len(tc.unread), tc.unread)
			continue
		}
		for i, u := range tc.unread {
			if !strings.Contains(f.Unread[i], u) {
				t.Errorf("%s: unread %q, want %q", tc.name, f.Unread[i], u)
			}
		}
	}
}

// TestReadOnlyTheRunnersNamed: a runner left out is not read.
func TestReadOnlyTheRunnersNamed(t *testing.T) {
	files := tree(map[string]string{"package.json": `{"ava": {"files": ["a/**"]}, "jest": {"testMatch": ["j/**"]}}`})
	if got := Read([]string{"jest"}, files).Patterns(); !slices.Equal(got, []string{"j/**"}) {
		t.Errorf("jest only: %q", got)
	}
	if got := Read(nil, files).Patterns(); got != nil {
		t.Errorf("no runner: %q", got)
	}
}

func TestExpand(t *testing.T) {
	for glob, want := range map[string][]string{
		"./test/**/*.js":           {"test/**/*.js"},
		"{src,lib}/**/*.test.js":   {"src/**/*.test.js", "lib/**/*.test.js"},
		"**/*.@(spec|test).?(c)js": {"**/*.spec.js", "**/*.spec.cjs", "**/*.test.js", "**/*.test.cjs"},
		"test/**.js":               {"test/*.js"},
		"a{b}.js":                  {"a{b}.js"},
	} {
		got, err := expand(glob)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("expand(%q) = %q, %v; want %q", glob, got, err, want)
		}
	}
	for _, glob := range []string{"!test/fixtures/**", "test/!(fixtures)/*.js", "../other/*.js", "/abs/*.js"} {
		if got, err := expand(glob); err == nil {
			t.Errorf("expand(%q) = %q, want an error", glob, got)
		}
	}
}
