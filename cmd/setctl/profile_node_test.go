package main

import (
	"strings"
	"testing"

	set "github.com/set-engine/set"
)

// The node sample's dependencies, at exact versions: TypeScript 6 (the
// newest typescript-eslint accepts), vitest 3 (vitest 4 and later need
// Node.js 22, and Debian's is 20), eslint with its TypeScript rules.
const nodeSamplePackageJSON = `{
  "name": "greeter",
  "private": true,
  "type": "module",
  "scripts": {
    "test": "vitest run"
  },
  "devDependencies": {
    "@eslint/js": "10.0.1",
    "eslint": "10.15.0",
    "typescript": "6.0.3",
    "typescript-eslint": "8.73.0",
    "vitest": "3.2.7"
  }
}
`

// sampleModule is a sample's cue.mod/module.cue, on the embedded module.
var sampleModule = `module: "example.com/sample@v0"
language: version: "v0.17.0"
deps: "github.com/set-engine/set@v0": v: "` + set.ModuleVersion + `"
`

// sampleSpec is every sample's spec: one requirement.
const sampleSpec = `# Greeter

## Greeting

### REQ-GREET-01: Greet by name
The greeting for a name is "Hello, NAME!".

#### Scenario: a name
- **WHEN** the greeting for "Ada" is asked
- **THEN** it is "Hello, Ada!"
`

// sampleSetCUE is a sample's set.cue on profile, with the exec agent.
func sampleSetCUE(profile string) string {
	return `package sample

import "github.com/set-engine/set/profiles/` + profile + `"

project: ` + profile + `.#Project & {
	name: "greeter"
	spec: ["docs/spec.md"]
	agent: {adapter: "exec", argv: ["sh", "AGENT", "{prompt_file}"]}
}
`
}

// TestProfileNode: an npm project with TypeScript, vitest and eslint. The
// install gate runs npm ci (the worktree has no node_modules), then tsc,
// eslint and vitest run; vitest's failure goes back to the agent named.
func TestProfileNode(t *testing.T) {
	t.Parallel()
	requireToolchain(t, "the node profile's sample needs Node.js >= 20.19 (apt-get install nodejs npm)",
		"node", "-e", `const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)`)
	requireToolchain(t, "the node profile's sample needs npm (apt-get install npm)", "npm", "--version")
	p := newSample(t, `#!/bin/sh
# The first iteration greets without the comma; the second, whose prompt
# holds the test gate's failure, fixes it.
set -e
sep=""
grep -q '^Gate test ' "$1" && sep=","
mkdir -p src
printf 'export function greet(name: string): string {\n  return "Hello%s " + name + "!";\n}\n' "$sep" > src/greet.ts
cat > src/greet.test.ts <<'END'
import { describe, expect, it } from "vitest";
import { greet } from "./greet";

describe("greet", () => {
  // REQ-GREET-01
  it("greets by name", () => {
    expect(greet("Ada")).toBe("Hello, Ada!");
  });
});
END
`, map[string]string{
		"package.json": nodeSamplePackageJSON,
		"tsconfig.json": `{
  "compilerOptions": {"target": "ES2022", "module": "ESNext", "moduleResolution": "Bundler", "strict": true, "noEmit": true, "skipLibCheck": true, "types": []},
  "include": ["src"]
}
`,
		"eslint.config.js": `import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(js.configs.recommended, ...tseslint.configs.recommended);
`,
		"src/index.ts":   "export { version } from \"./version\";\n",
		"src/version.ts": "export const version = \"0.1.0\";\n",
		"src/version.test.ts": `import { expect, it } from "vitest";
import { version } from "./version";

it("has a version", () => {
  expect(version).toMatch(/^\d+\.\d+\.\d+$/);
});
`,
		".gitignore":         "node_modules/\n.set/\n",
		"docs/spec.md":       sampleSpec,
		"cue.mod/module.cue": sampleModule,
		"set.cue":            sampleSetCUE("node"),
	})
	// The lockfile, from npm's download cache where it has the packages.
	p.run("npm", "install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error")
	p.commit()

	p.apply("greet", "install", "typecheck", "lint", "test")
	// The failure went back to the agent by name.
	p.fixedOnMain("src/greet.ts", `"Hello, "`, "FAIL  src/greet.test.ts > greet > greets by name")
}

// TestProfileNodeWithoutLockfile: a library without a lockfile by design
// (.npmrc: package-lock=false), tested by node --test under test/, with
// no linter and no type checker. install runs npm install, test_files
// counts test/greet.js, and the prompt says the project keeps its tests
// in test/. It needs no package from the registry.
func TestProfileNodeWithoutLockfile(t *testing.T) {
	t.Parallel()
	requireToolchain(t, "the node profile's sample needs Node.js (apt-get install nodejs npm)", "node", "--version")
	requireToolchain(t, "the node profile's sample needs npm (apt-get install npm)", "npm", "--version")
	p := newSample(t, `#!/bin/sh
# The first iteration greets without the comma; the second, whose prompt
# holds the test gate's failure, fixes it.
set -e
sep=""
grep -q '^Gate test ' "$1" && sep=","
printf 'export function greet(name) {\n  return "Hello%s " + name + "!";\n}\n' "$sep" > greet.js
cat > test/greet.js <<'END'
import assert from "node:assert/strict";
import { test } from "node:test";
import { greet } from "../greet.js";

// REQ-GREET-01
test("greets by name", () => {
  assert.equal(greet("Ada"), "Hello, Ada!");
});
END
`, map[string]string{
		"package.json": `{
  "name": "greeter",
  "version": "0.1.0",
  "type": "module",
  "scripts": {"test": "node --test"}
}
`,
		".npmrc":     "package-lock=false\n",
		"version.js": "export const version = \"0.1.0\";\n",
		"test/version.js": `import assert from "node:assert/strict";
import { test } from "node:test";
import { version } from "../version.js";

test("has a version", () => {
  assert.match(version, /^\d+\.\d+\.\d+$/);
});
`,
		".gitignore":         "node_modules/\n.set/\n",
		"docs/spec.md":       sampleSpec,
		"cue.mod/module.cue": sampleModule,
		"set.cue":            sampleSetCUE("node"),
	})
	p.commit()

	out := p.apply("greet", "install", "test", "test_files")
	for _, want := range []string{`greet +verify typecheck: skipped, nothing to type-check`, `greet +verify lint: skipped, nothing to lint`} {
		if !matchLine(out, want) {
			t.Errorf("apply's output has no line matching %q:\n%s", want, out)
		}
	}
	p.fixedOnMain("greet.js", `"Hello, "`, "Hello Ada!")
	if prompt := p.read(".set/changes/greet/prompt-1.md"); !strings.Contains(prompt, "This project keeps its tests in test/version.js:") {
		t.Errorf("the prompt does not say where the project keeps its tests:\n%s", prompt)
	}
	if log := p.read(p.baselineLog("install")); !strings.Contains(log, "no lockfile by design (.npmrc: package-lock=false)") {
		t.Errorf("install does not say why it installs without a lockfile:\n%s", log)
	}
}
