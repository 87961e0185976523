package gate

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseUnified(t *testing.T) {
	t.Parallel()
	diff := `diff --git a/a.go b/a.go
index 1111111..2222222 100644
--- a/a.go
+++ b/a.go
@@ -3 +3,2 @@ func f() {
-	old()
+	new()
+++ x
@@ -10,0 +12 @@ func g() {
+	added()
\ No newline at end of file
diff --git a/gone.go b/gone.go
deleted file mode 100644
--- a/gone.go
+++ /dev/null
@@ -1,2 +0,0 @@
-package gone
-+++ b/trap
diff --git a/img.png b/img.png
new file mode 100644
Binary files /dev/null and b/img.png differ
diff --git "a/sp ace/\303\251.go" "b/sp ace/\303\251.go"
new file mode 100644
--- /dev/null
+++ "b/sp ace/\303\251.go"
@@ -0,0 +1 @@
+package x
diff --git a/with space.go b/with space.go
--- a/with space.go
+++ b/with space.go	
@@ -1,0 +2 @@
+// tab-terminated name
`
	got, err := parseUnified(diff)
	if err != nil {
		t.Fatal(err)
	}
	want := []fileDiff{
		{Path: "a.go", Added: []addedLine{{3, "\tnew()"}, {4, "++ x"}, {12, "\tadded()"}}},
		{Path: "sp ace/é.go", Added: []addedLine{{1, "package x"}}},
		{Path: "with space.go", Added: []addedLine{{2, "// tab-terminated name"}}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("parseUnified (-want +got):\n%s", d)
	}
}

func TestParseUnifiedErrors(t *testing.T) {
	t.Parallel()
	for _, diff := range []string{
		"+++ b/a\n@@ -1 +1 @@\n-x\nnot a hunk line\n",
		"+++ b/a\n@@ bad @@\n",
		"+++ b/a\n@@ -x +1 @@\n",
		"+++ a-without-prefix\n",
		"+++ \"b/unterminated\n",
	} {
		if _, err := parseUnified(diff); err == nil {
			t.Errorf("parseUnified(%q): no error", diff)
		}
	}
}

// TestChangeDiffOddNames: paths git must quote come back as written.
func TestChangeDiffOddNames(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"plain.go": "package p\n"})
	names := []string{"dir with space/a b.go", "ünï/cödé.go", `quo"te.go`, "tab\tname.go"}
	for _, n := range names {
		r.write(n, "package p\n// REQ-X-01\n")
	}
	r.commit()
	d := &changeDiff{dir: r.dir, base: r.base}
	ctx := context.Background()

	files, err := d.files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.Sorted(slices.Values(names))
	if !slices.Equal(slices.Sorted(slices.Values(files)), sorted) {
		t.Errorf("files = %q, want %q", files, sorted)
	}
	st, err := d.statuses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Status != 'A' || !slices.Contains(names, s.Path) {
			t.Errorf("status %c %q", s.Status, s.Path)
		}
	}
	added, err := d.added(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range added {
		paths = append(paths, f.Path)
		if len(f.Added) != 2 || f.Added[1] != (addedLine{2, "// REQ-X-01"}) {
			t.Errorf("%q: added %v", f.Path, f.Added)
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(paths)), sorted) {
		t.Errorf("added paths = %q, want %q", paths, sorted)
	}
}
