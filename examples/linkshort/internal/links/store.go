// Package links owns short links: the mapping from a short code to the URL
// it redirects to.
//
// At this stage the package holds only the Store; creating, resolving and
// deleting links are described in docs/spec.md (domain LINKS).
package links

import "sync"

// Store keeps short links in memory. It is safe for concurrent use by
// multiple goroutines. Use NewStore to create one.
type Store struct {
	mu    sync.RWMutex
	links map[string]string // short code -> target URL
}

// NewStore returns an empty Store.
func NewStore() *Store {
	return &Store{links: make(map[string]string)}
}

// Len reports the number of links in the store.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.links)
}
