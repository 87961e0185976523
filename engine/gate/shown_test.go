package gate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/set-engine/set/engine/config"
)

// The diff a model-graded gate shows puts the files in the change's scope
// (or naming its requirements) first and lockfiles and docs last, keeps
// within the bound, fills what room is left with the head of the most
// relevant file that did not fit, and lists what it left out.
func TestShownDiffBound(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles)
	var big strings.Builder
	for i := range 300 {
		fmt.Fprintf(&big, "// line %d of a long file that the change adds to its scope\n", i)
	}
	r.write("internal/auth/big.go", "package auth\n\n"+big.String())
	r.write("internal/auth/login.go", "package auth\n\nfunc Login() {}\n")
	r.write("cmd/main.go", "package main\n\nfunc main() { println(\"hi\") }\n")
	r.write("cmd/REQ_test.go", "package main\n\n// REQ-AUTH-01\n")
	r.write("go.sum", "example.com/dep v1.0.0 h1:x\n")
	r.write("README.md", "# app\n\nMore.\n")
	r.commit()
	in := r.input(config.KindReview, featureChange)
	d := &changeDiff{dir: r.dir, base: r.base}

	whole, err := shown(context.Background(), in, d, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	wantOrder := []string{"cmd/REQ_test.go", "internal/auth/big.go", "internal/auth/login.go", "cmd/main.go", "README.md", "go.sum"}
	if diff := cmp.Diff(wantOrder, whole.Files); diff != "" || whole.Omitted != nil {
		t.Errorf("unbounded: omitted %v, order:\n%s", whole.Omitted, diff)
	}

	// Room for everything but big.go, and some of it.
	max := len(whole.Text) - 8000
	got, err := shown(context.Background(), in, d, max)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Text) > max {
		t.Errorf("shown %d bytes, over %d", len(got.Text), max)
	}
	if diff := cmp.Diff(wantOrder, got.Files); diff != "" {
		t.Errorf("order:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"internal/auth/big.go (shown in part; +302 -0 lines)"}, got.Omitted); diff != "" {
		t.Error(diff)
	}
	if !strings.Contains(got.Text, "+// line 0 of a long file") || strings.Contains(got.Text, "+// line 299 ") ||
		!strings.Contains(got.Text, "\n… (the rest of this file's diff is left out)\ndiff --git a/internal/auth/login.go") {
		t.Errorf("shown:\n%s", got.Text)
	}

	// No room for a part of big.go: it and the least relevant files that
	// do not fit are left out; smaller ones after them still fit.
	got, err = shown(context.Background(), in, d, 1200)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"cmd/REQ_test.go", "internal/auth/login.go", "cmd/main.go", "README.md", "go.sum"}, got.Files); diff != "" {
		t.Errorf("files:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"internal/auth/big.go (+302 -0 lines)"}, got.Omitted); diff != "" {
		t.Error(diff)
	}
}

func TestChunkPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ chunk, want string }{
		{"diff --git a/x.go b/x.go\nindex 1..2 100644\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n", "x.go"},
		{"diff --git a/gone.go b/gone.go\ndeleted file mode 100644\n--- a/gone.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n", "gone.go"},
		{"diff --git a/img b.png b/img b.png\nnew file mode 100644\nBinary files /dev/null and b/img b.png differ\n", "img b.png"},
		{"diff --git \"a/t\\tab.go\" \"b/t\\tab.go\"\nold mode 100644\nnew mode 100755\n", "t\tab.go"},
	} {
		got, err := chunkPath(tc.chunk)
		if err != nil || got != tc.want {
			t.Errorf("chunkPath(%q) = %q, %v; want %q", tc.chunk, got, err, tc.want)
		}
	}
}
