package main

import (
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
