package main

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// The web sample's dependencies, at exact versions: Next.js 16 (Node.js
// >= 20.9) with React 19, Playwright's test runner 1.65 (Node.js >= 20),
// TypeScript 6 (as node's sample), Drizzle's ORM and drizzle-kit. None of
// them downloads anything on install (Playwright's browsers come only from
// `playwright install`, which the sample never runs: its e2e tests use the
// system's Chromium).
const webSamplePackageJSON = `{
  "name": "greeter",
  "private": true,
  "dependencies": {
    "drizzle-orm": "0.45.4",
    "next": "16.4.6",
    "react": "19.3.1",
    "react-dom": "19.3.1"
  },
  "devDependencies": {
    "@playwright/test": "1.65.1",
    "@types/node": "20.19.43",
    "@types/react": "19.3.0",
    "drizzle-kit": "0.31.11",
    "typescript": "6.0.3"
  }
}
`

// webSampleTSConfig is tsconfig.json exactly as next build leaves it (it
// rewrites one that lacks a field it wants, which would leave the
// worktree dirty).
const webSampleTSConfig = `{
  "compilerOptions": {
    "target": "ES2022",
    "lib": [
      "dom",
      "dom.iterable",
      "esnext"
    ],
    "skipLibCheck": true,
    "strict": true,
    "noEmit": true,
    "module": "esnext",
    "moduleResolution": "bundler",
    "resolveJsonModule": true,
    "isolatedModules": true,
    "jsx": "react-jsx",
    "plugins": [
      {
        "name": "next"
      }
    ],
    "allowJs": true,
    "incremental": true,
    "esModuleInterop": true
  },
  "include": [
    "next-env.d.ts",
    ".next/types/**/*.ts",
    ".next/dev/types/**/*.ts",
    "**/*.ts",
    "**/*.tsx"
  ],
  "exclude": [
    "node_modules"
  ]
}
`

// webSampleSetCUE is the web sample's set.cue. Prisma, the profile's ORM,
// downloads its engines from its own servers, out of this machine's
// reach, so the sample's orm gate runs Drizzle's generator instead:
// drizzle-kit is plain JavaScript and writes the SQL of db/schema.ts
// (drizzle-kit export) without a database. That SQL is committed as
// db/schema.sql, a generated file regenerated on a merge conflict.
const webSampleSetCUE = `package sample

import "github.com/set-engine/set/profiles/web"

// Drizzle, not Prisma: prisma generate downloads its engines, which this
// machine cannot reach; drizzle-kit export needs nothing but node_modules.
_drizzle: web.#ORM & {schema: "db/schema.ts", generate: "$x drizzle-kit export > db/schema.sql"}

project: web.#Project & {
	name: "greeter"
	spec: ["docs/spec.md"]
	agent: {adapter: "exec", argv: ["sh", "AGENT", "{prompt_file}"]}
	gates: orm: _drizzle.gate
	generated: "db/schema.sql": regenerate: _drizzle.regenerate
	conventions: {
		prisma:  ""
		drizzle: "After changing db/schema.ts, run npm exec drizzle-kit export > db/schema.sql and commit db/schema.sql with it."
	}
}
`

// TestProfileWeb: a Next.js app with Playwright end-to-end tests on
// Debian's Chromium and a Drizzle schema. The change adds a page, its
// e2e test and a column; its first iteration greets without the comma, so
// the e2e gate fails and its retry context names the failing test and
// the trace and screenshot Playwright kept; the second fixes the page.
// The orm gate checks the column's SQL that the agent committed against
// what drizzle-kit writes; build and e2e run next build and Playwright.
// The layout uses next/font/google, which next build cannot fetch here,
// and one Playwright project (which runs the home page's test) does not
// read CHROMIUM_PATH: the baseline passes on the profile's defaults.
func TestProfileWeb(t *testing.T) {
	t.Parallel()
	requireToolchain(t, "the web profile's sample needs Node.js >= 20.9 (apt-get install nodejs npm)",
		"node", "-e", `const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 9) ? 0 : 1)`)
	requireToolchain(t, "the web profile's sample needs npm (apt-get install npm)", "npm", "--version")
	requireToolchain(t, "the web profile's sample needs Chromium for its e2e tests (apt-get install chromium)", "chromium", "--version")
	p := newSample(t, `#!/bin/sh
# The first iteration greets without the comma; the second, whose prompt
# holds the e2e gate's failure, fixes it. Both add the greeting column with
# the SQL drizzle-kit export writes for it.
set -e
sep=""
grep -q '^Gate e2e ' "$1" && sep=","
mkdir -p lib 'app/hello/[name]'
printf 'export function greet(name: string): string {\n  return "Hello%s " + name + "!";\n}\n' "$sep" > lib/greet.ts
cat > 'app/hello/[name]/page.tsx' <<'END'
import { greet } from "../../../lib/greet";

export default async function Hello({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  return <p id="greeting">{greet(decodeURIComponent(name))}</p>;
}
END
cat > e2e/greet.spec.ts <<'END'
import { expect, test } from "@playwright/test";

// REQ-GREET-01
test("greets by name", async ({ page }) => {
  await page.goto("/hello/Ada");
  await expect(page.locator("#greeting")).toHaveText("Hello, Ada!");
});
END
cat > db/schema.ts <<'END'
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const greetings = sqliteTable("greetings", {
  id: integer("id").primaryKey(),
  name: text("name").notNull(),
  greeting: text("greeting").notNull(),
});
END
# drizzle-kit quotes names with backquotes (\140).
printf 'CREATE TABLE \140greetings\140 (\n\t\140id\140 integer PRIMARY KEY NOT NULL,\n\t\140name\140 text NOT NULL,\n\t\140greeting\140 text NOT NULL\n);\n\n' > db/schema.sql
`, map[string]string{
		"package.json":  webSamplePackageJSON,
		"tsconfig.json": webSampleTSConfig,
		// next/font/google, as create-next-app writes it: next build
		// fetches the font from fonts.googleapis.com, out of this
		// machine's reach, and the build gate builds without it.
		"app/layout.tsx": `import { Inter } from "next/font/google";

const inter = Inter({ subsets: ["latin"] });

export const metadata = { title: "Greeter" };

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en">
      <body className={inter.className}>{children}</body>
    </html>
  );
}
`,
		"app/page.tsx": "export default function Home() {\n  return <h1>Greeter</h1>;\n}\n",
		"e2e/home.spec.ts": `import { expect, test } from "@playwright/test";

test("has a heading", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Greeter" })).toBeVisible();
});
`,
		// The port is free when the test starts, so that samples run
		// side by side do not meet on one.
		"playwright.config.ts": `import { defineConfig, devices } from "@playwright/test";

const port = ` + strconv.Itoa(freePort(t)) + `;

export default defineConfig({
  testDir: "e2e",
  retries: 0,
  use: {
    baseURL: ` + "`http://127.0.0.1:${port}`" + `,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  projects: [
    {
      name: "chromium",
      use: { ...devices["Desktop Chrome"], launchOptions: { executablePath: process.env.CHROMIUM_PATH } },
    },
    // As npm init playwright writes it: Playwright's own Chromium, which
    // the e2e gate replaces with the system's when it is not installed.
    // It runs the home page's test alone, so that the failure the agent
    // is handed is the chromium project's only.
    {
      name: "defaults",
      testMatch: /home\.spec\.ts/,
      use: { ...devices["Desktop Chrome"] },
    },
  ],
  webServer: {
    command: ` + "`npm exec --no -- next dev -H 127.0.0.1 -p ${port}`" + `,
    url: ` + "`http://127.0.0.1:${port}`" + `,
    reuseExistingServer: false,
  },
});
`,
		"db/schema.ts": `import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const greetings = sqliteTable("greetings", {
  id: integer("id").primaryKey(),
  name: text("name").notNull(),
});
`,
		"drizzle.config.ts": `import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./db/schema.ts",
  out: "./drizzle",
});
`,
		".gitignore":         "node_modules/\n.next/\nnext-env.d.ts\n*.tsbuildinfo\ntest-results/\nplaywright-report/\n.set/\n",
		"docs/spec.md":       sampleSpec,
		"cue.mod/module.cue": sampleModule,
		"set.cue":            webSampleSetCUE,
	})
	// Nothing of the pinned packages downloads a browser; this keeps it so
	// for the skeleton's install and the install gate alike (passEnv).
	p.setenv("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
	// The lockfile, from npm's download cache where it has the packages,
	// and the schema's SQL as drizzle-kit writes it.
	p.run("npm", "install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error")
	p.run("sh", "-c", "npm exec --no -- drizzle-kit export > db/schema.sql")
	p.commit()

	out := p.applyFailing("greet", "e2e", "install", "typecheck", "orm", "build", "e2e")
	for _, want := range []string{`baseline orm: pass`, `baseline build: pass`, `baseline e2e: pass`,
		`greet +verify lint: skipped, nothing to lint: no linter configured`, `greet +verify test: skipped, nothing to test: package.json has no test script`} {
		if !matchLine(out, want) {
			t.Errorf("apply's output has no line matching %q:\n%s", want, out)
		}
	}
	if got := p.gitShow("db/schema.sql"); !strings.Contains(got, "`greeting` text NOT NULL") {
		t.Errorf("main's db/schema.sql lacks the greeting column:\n%s", got)
	}
	// The failure went back to the agent by name, with what Playwright
	// kept of it.
	p.fixedOnMain("lib/greet.ts", `"Hello, "`,
		"1) [chromium] › e2e/greet.spec.ts:4:1 › greets by name",
		`Received: "Hello Ada!"`,
		"Playwright kept, for each failing test",
		"  test-results/greet-greets-by-name-chromium/test-failed-1.png\n",
		"  test-results/greet-greets-by-name-chromium/trace.zip\n")
}

// freePort is a TCP port of 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
