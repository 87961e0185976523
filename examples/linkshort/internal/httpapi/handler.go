// Package httpapi exposes linkshort over HTTP.
//
// At this stage it serves only the health check; the link, statistics and
// admin endpoints are described in docs/spec.md.
package httpapi

import (
	"io"
	"net/http"

	"example.com/linkshort/internal/links"
)

// server holds the dependencies shared by the HTTP handlers.
type server struct {
	store *links.Store
}

// NewHandler returns the HTTP handler for the linkshort API, backed by store.
//
// Routes:
//
//	GET /healthz  200 "ok" while the process is able to serve requests
func NewHandler(store *links.Store) http.Handler {
	s := &server{store: store}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.handleHealthz)
	return mux
}

// handleHealthz reports that the service is up.
func (s *server) handleHealthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	// A failed write means the client went away; there is no one left to
	// report the error to.
	_, _ = io.WriteString(w, "ok")
}
