// Package stats counts clicks on short links.
//
// Its future job (docs/spec.md, domain STATS) is to record every successful
// resolution of a short code and to expose the totals per link. For now it
// provides the building block: a concurrency-safe Counter.
package stats

import "sync/atomic"

// Counter is a monotonically increasing count, safe for concurrent use.
// The zero value is a counter at 0, ready to use. A Counter must not be
// copied after first use.
type Counter struct {
	n atomic.Int64
}

// Inc adds one to the counter and returns the new value.
func (c *Counter) Inc() int64 {
	return c.n.Add(1)
}

// Get returns the current value of the counter.
func (c *Counter) Get() int64 {
	return c.n.Load()
}
