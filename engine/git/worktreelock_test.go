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
	t.Parallel()
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
