package dashboard

import "sync"

// Stopped is the last event of every stream of a Server that Stop ended:
// the page keeps what it shows, says Reason and stops reconnecting.
type Stopped struct {
	// Reason says why the dashboard stopped and how to open it again,
	// as the one who stopped it puts it (setctl apply: "the run ended;
	// …").
	Reason string `json:"reason"`
}

// stopping is how Stop reaches the streams a Server serves: done is
// closed once, when it stops, and reason is set before.
type stopping struct {
	once   sync.Once
	done   chan struct{}
	reason string
}

// Stop ends every stream the server serves, and every one asked for
// after, with a "stopped" event (Stopped) carrying reason. The caller
// then shuts its http.Server down (http.Server.Shutdown): the streams
// have returned and their last event is with the page, so the
// connections go idle and close without being cut. A second Stop does
// nothing.
func (s *Server) Stop(reason string) {
	s.stop.once.Do(func() {
		s.stop.reason = reason
		close(s.stop.done)
	})
}

// stopped is the Stopped event of a stopped server.
func (s *Server) stopped() Stopped { return Stopped{Reason: s.stop.reason} }
