package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/set-engine/set/engine/atomicfile"
	"github.com/set-engine/set/engine/rundir"
)

// sessionStore remembers, per agent session, the running totals a CLI
// reports cumulatively over a session, so that a resumed session is
// counted from where the previous iteration left it:
//
//   - codex: turn.completed usage is cumulative over the thread, across
//     `codex exec resume` too;
//   - claude: with --resume, result.usage covers only the new run but
//     total_cost_usd (and modelUsage) the whole session.
//
// Totals live in memory and, when dir is set, in dir/<adapter>-<session>.json
// (written atomically), so that a restarted `setctl apply` resuming a session
// still counts only the new usage. Persistence is best-effort: a session
// id that is not a safe file name, or a write that fails, only loses the
// file (a warning goes to the iteration's log). setctl prune removes a
// session's file with the last run whose events name the session
// (sessionId), so a file keyed by anything but the session id would stay.
type sessionStore struct {
	dir string // "" = memory only

	mu  sync.Mutex
	mem map[string][]byte
}

// sessionFileID is what a session id must look like to name a file.
var sessionFileID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (s *sessionStore) path(adapter, session string) string {
	if s.dir == "" || !sessionFileID.MatchString(session) {
		return ""
	}
	return filepath.Join(s.dir, adapter+"-"+session+".json")
}

// load fills v with the totals saved for the session and reports whether
// there were any.
func (s *sessionStore) load(adapter, session string, v any) bool {
	if session == "" {
		return false
	}
	key := adapter + "/" + session
	s.mu.Lock()
	b, ok := s.mem[key]
	s.mu.Unlock()
	if !ok {
		p := s.path(adapter, session)
		if p == "" {
			return false
		}
		var err error
		if b, err = os.ReadFile(p); err != nil {
			return false
		}
	}
	return json.Unmarshal(b, v) == nil
}

// save records the session's totals v.
func (s *sessionStore) save(adapter, session string, v any, log io.Writer) {
	if session == "" {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.mem == nil {
		s.mem = map[string][]byte{}
	}
	s.mem[adapter+"/"+session] = b
	s.mu.Unlock()
	p := s.path(adapter, session)
	if p == "" {
		return
	}
	err = os.MkdirAll(s.dir, 0o755)
	if err == nil {
		err = atomicfile.Write(p, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(log, "\nset: cannot save the session totals of %s: %v\n", session, err)
	}
}

// sessionsDir is where New keeps session totals for the project at root.
func sessionsDir(root string) string {
	if root == "" {
		return ""
	}
	return rundir.New(root).Sessions()
}
