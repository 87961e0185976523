package links

import (
	"sync"
	"testing"
)

func TestNewStoreIsEmpty(t *testing.T) {
	s := NewStore()
	if got := s.Len(); got != 0 {
		t.Fatalf("Len() = %d, want 0", got)
	}
}

func TestLenConcurrent(t *testing.T) {
	s := NewStore()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := s.Len(); got != 0 {
				t.Errorf("Len() = %d, want 0", got)
			}
		})
	}
	wg.Wait()
}
