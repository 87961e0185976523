package git

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
)

// TestWorktreeLockSerialisesWorktrees: worktrees added and removed from
// many goroutines at once, through one lock, all end as asked.
func TestWorktreeLockSerialisesWorktrees(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	l := NewWorktreeLock(r.dir)
	base := r.git("rev-parse", "HEAD")
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			wt := filepath.Join(dir, "wt", string(rune('a'+i)))
			l.Do(func(w LockedWorktrees) {
				if _, errs[i] = w.New(ctx, wt, "set/"+string(rune('a'+i)), base); errs[i] != nil {
					return
				}
				errs[i] = w.Check(ctx, wt, "set/"+string(rune('a'+i)))
			})
			if errs[i] == nil && i%2 == 0 {
				l.Do(func(w LockedWorktrees) { errs[i] = w.SetAside(ctx, wt, wt+".trash") })
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("worktree %d: %v", i, err)
		}
	}
	list, err := Worktrees(ctx, r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1+4 { // the root and the odd ones
		t.Errorf("worktrees = %+v; want the root and 4", list)
	}
}

// TestSameTree: commits with the same files have the same tree, whatever
// their histories; a commit that changed a file has another.
func TestSameTree(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	first := r.git("rev-parse", "HEAD")
	r.git("commit", "-q", "--allow-empty", "-m", "no change")
	empty := r.git("rev-parse", "HEAD")
	r.write("f", "changed\n")
	changed := r.commit("changes f")
	if same, err := SameTree(ctx, r.dir, first, empty); !same || err != nil {
		t.Errorf("SameTree(first, empty commit) = %v, %v; want true", same, err)
	}
	if same, err := SameTree(ctx, r.dir, first, changed); same || err != nil {
		t.Errorf("SameTree(first, changed) = %v, %v; want false", same, err)
	}
	if _, err := SameTree(ctx, r.dir, first, "no-such-rev"); err == nil {
		t.Error("SameTree of a missing revision: no error")
	}
}
