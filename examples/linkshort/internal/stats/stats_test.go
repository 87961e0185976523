package stats

import (
	"sync"
	"testing"
)

func TestCounterZeroValue(t *testing.T) {
	var c Counter
	if got := c.Get(); got != 0 {
		t.Fatalf("Get() = %d, want 0", got)
	}
}

func TestCounterInc(t *testing.T) {
	var c Counter
	if got := c.Inc(); got != 1 {
		t.Errorf("first Inc() = %d, want 1", got)
	}
	if got := c.Inc(); got != 2 {
		t.Errorf("second Inc() = %d, want 2", got)
	}
	if got := c.Get(); got != 2 {
		t.Errorf("Get() = %d, want 2", got)
	}
}

func TestCounterConcurrent(t *testing.T) {
	const n = 100
	var c Counter
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { c.Inc() })
	}
	wg.Wait()
	if got := c.Get(); got != n {
		t.Fatalf("Get() = %d, want %d", got, n)
	}
}
