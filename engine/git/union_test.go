package git

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// conflicted starts a merge of branch "other" into main that conflicts
// in the files both wrote, after setup wrote them on each side.
func conflicted(t *testing.T, base, ours, theirs map[string]string) *repo {
	t.Helper()
	r := newRepo(t)
	for name, c := range base {
		r.write(name, c)
	}
	r.commit("base")
	r.git("checkout", "-q", "-b", "other")
	for name, c := range theirs {
		r.write(name, c)
	}
	r.commit("theirs")
	r.git("checkout", "-q", "main")
	for name, c := range ours {
		r.write(name, c)
	}
	r.commit("ours")
	if res, err := Merge(context.Background(), r.dir, "other", "merge"); err != nil || res.Clean {
		t.Fatalf("merge = %+v, %v; want a conflict", res, err)
	}
	return r
}

func TestResolveUnion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := conflicted(t,
		map[string]string{"log.md": "a\n"},
		map[string]string{"log.md": "a\nours\n", "new.md": "x\nours\n"},
		map[string]string{"log.md": "a\ntheirs\n", "new.md": "x\ntheirs\n"})
	for name, want := range map[string]string{
		"log.md": "a\nours\ntheirs\n",
		// Added on both sides: an empty base; the lines both added alike
		// are kept once, as git's union driver keeps them.
		"new.md": "x\nours\ntheirs\n",
	} {
		ok, err := ResolveUnion(ctx, r.dir, name)
		if err != nil || !ok {
			t.Fatalf("ResolveUnion(%s) = %v, %v", name, ok, err)
		}
		if got := r.read(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if left, err := Conflicts(ctx, r.dir); err != nil || len(left) != 0 {
		t.Errorf("still unmerged: %q (%v)", left, err)
	}
}

// A deletion on one side, or a binary file, is no conflict of lines:
// ResolveUnion leaves it unmerged.
func TestResolveUnionLeaves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	r.write("gone.md", "a\n")
	r.write("blob.bin", "\x00a\n")
	r.commit("base")
	r.git("checkout", "-q", "-b", "other")
	r.git("rm", "-q", "gone.md")
	r.write("blob.bin", "\x00a\ntheirs\n")
	r.commit("theirs")
	r.git("checkout", "-q", "main")
	r.write("gone.md", "a\nours\n")
	r.write("blob.bin", "\x00a\nours\n")
	r.commit("ours")
	if res, err := Merge(ctx, r.dir, "other", "merge"); err != nil || res.Clean {
		t.Fatalf("merge = %+v, %v; want a conflict", res, err)
	}
	for _, name := range []string{"gone.md", "blob.bin"} {
		if ok, err := ResolveUnion(ctx, r.dir, name); err != nil || ok {
			t.Errorf("ResolveUnion(%s) = %v, %v; want false", name, ok, err)
		}
	}
	left, err := Conflicts(ctx, r.dir)
	if diff := cmp.Diff([]string{"blob.bin", "gone.md"}, left); err != nil || diff != "" {
		t.Errorf("unmerged (-want +got):\n%s%v", diff, err)
	}
}

func TestUnionAttributes(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.write(".gitattributes", "*.md merge=union\nREADME.md -merge\n")
	got, err := UnionAttributes(context.Background(), r.dir, []string{"CHANGES.md", "README.md", "notes.txt", "docs/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"CHANGES.md", "docs/a.md"}, got); diff != "" {
		t.Errorf("union paths (-want +got):\n%s", diff)
	}
}
