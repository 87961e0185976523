package git

import (
	"context"
	"strings"
	"testing"
)

func TestCommitDiff(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	base := r.git("rev-parse", "HEAD")
	r.write("greet.go", "package greet\n\nfunc Hello() string { return \"hi\" }\n")
	r.commit("greet")
	r.write("greet.go", "package greet\n\nfunc Hello() string { return \"hello\" }\n")
	r.commit("fix")
	head := r.git("rev-parse", "HEAD")
	// An external diff driver of the user's is not run.
	r.git("config", "diff.external", "false")
	ctx := context.Background()
	got, err := CommitDiff(ctx, r.dir, base, head)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"diff --git a/greet.go b/greet.go", "new file mode", `+func Hello() string { return "hello" }`} {
		if !strings.Contains(got, want) {
			t.Errorf("CommitDiff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"hi"`) {
		t.Errorf("CommitDiff shows the intermediate commit:\n%s", got)
	}
	for _, bad := range [][2]string{{"--output=/tmp/x", head}, {base, "HEAD"}, {base, head + ".." + base}} {
		if _, err := CommitDiff(ctx, r.dir, bad[0], bad[1]); err == nil {
			t.Errorf("CommitDiff(%q, %q): no error", bad[0], bad[1])
		}
	}
	if _, err := CommitDiff(ctx, r.dir, base, strings.Repeat("1", 40)); err == nil {
		t.Error("CommitDiff to a missing commit: no error")
	}
}
