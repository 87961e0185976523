package git

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// execSnapshotVersion is the version of ExecSnapshot's encoded form; a
// form of another version does not decode.
const execSnapshotVersion = 1

// execSnapshotFile is ExecSnapshot's encoded form: what it read, without
// where it read it, so that a repository moved in between still decodes
// (DecodeExecSnapshot finds its git directory again).
type execSnapshotFile struct {
	Version int `json:"version"`
	// Hooks are the hooks' files by path relative to the repository's
	// top (slash-separated).
	Hooks map[string]hookFileJSON `json:"hooks"`
	// Config are the watched entries, in file and key order.
	Config []configEntryJSON `json:"config"`
}

type hookFileJSON struct {
	// Mode is the file's type and permissions (fs.FileMode).
	Mode fs.FileMode `json:"mode"`
	// Data is its content, a symlink's target.
	Data []byte `json:"data"`
}

type configEntryJSON struct {
	File   string   `json:"file"`
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// Encode is s as DecodeExecSnapshot reads it back: every hook's mode and
// content, and every watched configuration entry with its values.
func (s *ExecSnapshot) Encode() ([]byte, error) {
	f := execSnapshotFile{Version: execSnapshotVersion, Hooks: map[string]hookFileJSON{}, Config: []configEntryJSON{}}
	for p, h := range s.hooks {
		f.Hooks[p] = hookFileJSON{Mode: h.mode, Data: h.data}
	}
	for k, vs := range s.config {
		f.Config = append(f.Config, configEntryJSON{File: k.file, Key: k.key, Values: vs})
	}
	slices.SortFunc(f.Config, func(a, b configEntryJSON) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return json.MarshalIndent(f, "", "  ")
}

// DecodeExecSnapshot is the snapshot Encode gave data for, of the
// repository dir is in now: Diff and Restore compare it with that
// repository as they would the snapshot data was encoded from. It knows
// no configuration file's content, so its first Now reads each with git.
func DecodeExecSnapshot(ctx context.Context, dir string, data []byte) (*ExecSnapshot, error) {
	var f execSnapshotFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("decoding a snapshot of the git directory: %w", err)
	}
	if f.Version != execSnapshotVersion {
		return nil, fmt.Errorf("decoding a snapshot of the git directory: version %d, want %d", f.Version, execSnapshotVersion)
	}
	s, err := locateExecSnapshot(ctx, dir)
	if err != nil {
		return nil, err
	}
	s.hooks, s.config, s.configData = map[string]hookFile{}, map[configEntry][]string{}, map[string][]byte{}
	for p, h := range f.Hooks {
		if !fs.ValidPath(p) {
			return nil, fmt.Errorf("decoding a snapshot of the git directory: hook path %q", p)
		}
		s.hooks[p] = hookFile{mode: h.Mode, data: h.Data}
	}
	for _, e := range f.Config {
		if !runsPrograms(e.Key) || len(e.Values) == 0 {
			return nil, fmt.Errorf("decoding a snapshot of the git directory: entry %q of %s", e.Key, e.File)
		}
		s.config[configEntry{e.File, e.Key}] = e.Values
	}
	return s, nil
}
