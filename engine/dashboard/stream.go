package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/set-engine/set/engine/journal"
	"github.com/set-engine/set/engine/state"
)

// RefreshInterval is how often a stream sends the overview even without a
// new event: ages grow, and an apply that died journals nothing (its
// lock tells).
const RefreshInterval = 2 * time.Second

// sse writes Server-Sent Events to one client.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startSSE answers r with an event stream.
func startSSE(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, rc: http.NewResponseController(w)}
	s.rc.Flush()
	return s
}

// send writes one event named name whose data is v as JSON, and flushes
// it to the client.
func (s *sse) send(name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		return err
	}
	return s.rc.Flush()
}

// serveStream streams p's run: an "overview" (Overview) at once, then,
// for every event journaled, the "journal" event (the journal line) and,
// once a burst of them is applied, a fresh "overview"; and an "overview"
// every RefreshInterval. It runs until the client goes, or until Stop:
// then its last event is "stopped" (Stopped). It follows the journal's
// latest run only: an earlier one (?run=) has ended, and the page reads
// it once.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, p *served) {
	st, err := state.Read(p.layout.Dir())
	if err != nil {
		httpError(w, err)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	events := make(chan journal.Event, 64)
	followErr := make(chan error, 1)
	go func() {
		followErr <- journal.Follow(ctx, p.layout.Events(), st.LastSeq, func(e journal.Event) error {
			select {
			case events <- e:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	out := startSSE(w)
	sendOverview := func() error {
		live, err := p.liveness()
		if err != nil {
			return err
		}
		return out.send("overview", s.overview(p, st, live))
	}
	if err := sendOverview(); err != nil {
		return
	}
	tick := time.NewTicker(RefreshInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stop.done:
			out.send("stopped", s.stopped())
			return
		case err := <-followErr:
			if !errors.Is(err, context.Canceled) {
				out.send("problem", err.Error())
			}
			return
		case <-tick.C:
			if sendOverview() != nil {
				return
			}
		case e := <-events:
			// Apply the burst of events that came, then show it once.
			for burst := true; burst; {
				if err := state.Apply(st, e); err != nil {
					out.send("problem", err.Error())
					return
				}
				if out.send("journal", e) != nil {
					return
				}
				select {
				case e = <-events:
				default:
					burst = false
				}
			}
			if sendOverview() != nil {
				return
			}
		}
	}
}

// LogPollInterval is how often a log stream looks for more of the log.
const LogPollInterval = 250 * time.Millisecond

// serveLogStream streams the log ?path= as it grows: a "log" event
// (LogChunk) with what it holds from ?offset= (its last 64 KiB by
// default), then one for each time it grows. A log that does not exist
// yet is waited for. It runs until the client goes, or until Stop.
func (s *Server) serveLogStream(w http.ResponseWriter, r *http.Request, p *served) {
	file, rel, err := p.logFile(r.URL.Query().Get("path"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	off := int64(-64 << 10)
	if o := r.URL.Query().Get("offset"); o != "" {
		if _, err := fmt.Sscan(o, &off); err != nil {
			http.Error(w, "offset: not a number: "+o, http.StatusBadRequest)
			return
		}
	}
	out := startSSE(w)
	tick := time.NewTicker(LogPollInterval)
	defer tick.Stop()
	for first := true; ; first = false {
		chunk, err := p.readLog(file, rel, off)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			out.send("problem", err.Error())
			return
		case first || chunk.Text != "":
			if out.send("log", chunk) != nil {
				return
			}
			off = chunk.Offset + int64(len(chunk.Text))
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.stop.done:
			return
		case <-tick.C:
		}
	}
}
