package main

import (
	"strings"
	"testing"
)

// TestProfileRust: a cargo library without dependencies (crates.io is
// out of this machine's reach). cargo build, fmt, clippy and test run;
// the failing test goes back to the agent named.
func TestProfileRust(t *testing.T) {
	t.Parallel()
	requireToolchain(t, "the rust profile's sample needs cargo (rustup, or apt-get install cargo)", "cargo", "--version")
	requireToolchain(t, "the rust profile's sample needs clippy (rustup component add clippy, or apt-get install rust-clippy)", "cargo", "clippy", "--version")
	requireToolchain(t, "the rust profile's sample needs rustfmt (rustup component add rustfmt, or apt-get install rustfmt)", "cargo", "fmt", "--version")
	p := newSample(t, `#!/bin/sh
# The first iteration greets without the comma; the second, whose prompt
# holds the test gate's failure, fixes it.
set -e
sep=""
grep -q '^Gate test ' "$1" && sep=","
cat > src/lib.rs <<'END'
//! Greeter greets.

pub mod greet;
pub mod version;
END
cat > src/greet.rs <<END
//! Greetings.

/// The greeting for name.
pub fn greet(name: &str) -> String {
    format!("Hello$sep {name}!")
}
END
cat > tests/greet.rs <<'END'
use greeter::greet::greet;

// REQ-GREET-01
#[test]
fn greets_by_name() {
    assert_eq!(greet("Ada"), "Hello, Ada!");
}
END
`, map[string]string{
		"Cargo.toml": `[package]
name = "greeter"
version = "0.1.0"
edition = "2021"

[dependencies]
`,
		"src/lib.rs":     "//! Greeter greets.\n\npub mod version;\n",
		"src/version.rs": "//! The version.\n\n/// The crate's version.\npub const VERSION: &str = \"0.1.0\";\n",
		"tests/version.rs": `use greeter::version::VERSION;

#[test]
fn has_a_version() {
    assert_eq!(VERSION.split('.').count(), 3);
}
`,
		".gitignore":         "/target\n.set/\n",
		"docs/spec.md":       sampleSpec,
		"cue.mod/module.cue": sampleModule,
		"set.cue":            sampleSetCUE("rust"),
	})
	p.run("cargo", "generate-lockfile", "--offline")
	p.commit()

	p.apply("greet", "build", "fmt", "clippy", "test")
	p.fixedOnMain("src/greet.rs", `"Hello, {name}!"`, "test greets_by_name ... FAILED")
}

// TestProfileRustWorkspace: a library crate at the root of a workspace
// with a member, laid out as real crates are and set up as libraries
// commonly are: Cargo.lock git-ignored, no clippy configuration and a
// clippy warning on main (a newer clippy's lint), and a test that
// compiles against the crate from the test binary's deps directory, as
// build helpers' tests do (autocfg's). The member's doc test fails the
// first iteration: cargo test runs the whole workspace, doc tests
// included. The second iteration gives the member a dependency on a new
// crate of the workspace, which the Cargo.lock the first iteration's
// build wrote does not hold. The member's tests/ counts as test files.
func TestProfileRustWorkspace(t *testing.T) {
	t.Parallel()
	requireToolchain(t, "the rust profile's sample needs cargo (rustup, or apt-get install cargo)", "cargo", "--version")
	requireToolchain(t, "the rust profile's sample needs clippy (rustup component add clippy, or apt-get install rust-clippy)", "cargo", "clippy", "--version")
	requireToolchain(t, "the rust profile's sample needs rustfmt (rustup component add rustfmt, or apt-get install rustfmt)", "cargo", "fmt", "--version")
	p := newSample(t, `#!/bin/sh
# The first iteration greets without the comma, which the member's doc
# test catches; the second, whose prompt holds the test gate's failure,
# fixes it, and gives the member a dependency on a new crate of the
# workspace.
set -e
fence=$(printf "\\140\\140\\140")
sep=""
if grep -q '^Gate test ' "$1"; then
	sep=","
	grep -q polite greet/Cargo.toml || printf '\n[dependencies]\npolite = { path = "../polite" }\n' >> greet/Cargo.toml
	mkdir -p polite/src
	printf '[package]\nname = "polite"\nversion = "0.1.0"\nedition = "2021"\n' > polite/Cargo.toml
	printf '//! Politeness.\n' > polite/src/lib.rs
fi
cat > greet/src/lib.rs <<END
//! Greetings.

/// The greeting for name.
///
/// $fence
/// assert_eq!(greet::greet("Ada"), "Hello, Ada!");
/// $fence
pub fn greet(name: &str) -> String {
    format!("Hello$sep {name}!")
}
END
mkdir -p greet/tests
cat > greet/tests/greet.rs <<'END'
// REQ-GREET-01
#[test]
fn greets_by_name() {
    assert!(greet::greet("Ada").contains("Ada"));
}
END
`, map[string]string{
		"Cargo.toml": `[package]
name = "greeter"
version = "0.1.0"
edition = "2021"

[workspace]
members = ["greet"]

[dependencies]
`,
		"src/lib.rs": `//! Greeter.

/// The answer.
pub fn answer() -> u32 {
    return 42;
}
`,
		"tests/extern_crate.rs": `use std::fs;
use std::process::Command;

// rustc compiles a crate against this one, found in the test binary's
// deps directory, as a build helper's tests do.
#[test]
fn compiles_against_the_crate() {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("probe.rs");
    fs::write(
        &src,
        "extern crate greeter;\npub fn probe() -> u32 { greeter::answer() }\n",
    )
    .unwrap();
    let out = Command::new("rustc")
        .args(["--crate-type", "lib", "--edition", "2021", "--out-dir"])
        .arg(dir)
        .arg("-L")
        .arg(&deps)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
`,
		"greet/Cargo.toml": `[package]
name = "greet"
version = "0.1.0"
edition = "2021"
`,
		"greet/src/lib.rs":   "//! Greetings.\n",
		".gitignore":         "/target\nCargo.lock\n.set/\n",
		"docs/spec.md":       sampleSpec,
		"cue.mod/module.cue": sampleModule,
		"set.cue":            sampleSetCUE("rust"),
	})
	p.commit()

	p.apply("greet", "test_files", "build", "fmt", "clippy", "test", "spec_verify")
	p.fixedOnMain("greet/src/lib.rs", `"Hello, {name}!"`, "test greet/src/lib.rs - greet (line 5) ... FAILED")
	if got := p.gitShow("greet/Cargo.toml"); !strings.Contains(got, `polite = { path = "../polite" }`) {
		t.Errorf("main's greet/Cargo.toml does not depend on polite:\n%s", got)
	}
}
