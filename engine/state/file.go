package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/set-engine/set/engine/atomicfile"
)

// Encode is the snapshot form of s, for WriteEncoded.
func Encode(s *State) ([]byte, error) {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	return append(data, '\n'), nil
}

// WriteEncoded writes a snapshot made by Encode to path atomically.
func WriteEncoded(path string, data []byte) error {
	return atomicfile.Write(path, data, 0o644)
}

// Load reads a snapshot written by WriteEncoded. A snapshot of another
// FormatVersion is an error; rebuild the state from the journal instead.
// A missing file is an error that satisfies errors.Is(err, os.ErrNotExist).
//
// set itself never reads state.json (it rebuilds the state from the
// journal, see Read): Load is the snapshot's reader for those outside the
// run, the tests of the packages that write it (orchestrator, setctl's kill
// campaign) among them, which is why it is not in a _test.go file.
func Load(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: not a state file: %w", path, err)
	}
	if head.Version != FormatVersion {
		return nil, fmt.Errorf("%s: state file version %d is not supported by this set (it reads version %d); delete it to rebuild it from the journal", path, head.Version, FormatVersion)
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Changes == nil {
		s.Changes = map[string]*Change{}
	}
	for name, c := range s.Changes {
		if c == nil || c.Name != name {
			return nil, fmt.Errorf("%s: change %q: entry does not name it", path, name)
		}
	}
	return &s, nil
}
