package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/set-engine/set/engine/config"
	"github.com/set-engine/set/engine/openspec"
)

// Fingerprint identifies the inputs a plan was made from: the decoded
// configuration, each spec file, the git HEAD, the living specs on main
// (what main records as implemented) and, for the openspec strategy, each
// open change folder on main. Two fingerprints with the same Sum
// come from the same inputs. The configuration's budgets, sentinel and
// replan settings are left out: they bound, supervise and extend a run,
// they do not shape its plan, so raising a budget or turning replan on
// neither makes a saved plan stale nor starts a new run (the run goes on
// under the new settings). So are learn's settings and the learnings'
// signatures, which only setctl learn reads.
type Fingerprint struct {
	Sum    string            `json:"sum"`
	Config string            `json:"config"`
	Specs  map[string]string `json:"specs"`
	Head   string            `json:"head,omitempty"`
	// Living hashes main's living specs; "" when main has none.
	Living string `json:"living,omitempty"`
	// Folders hashes, by name, each open change folder on main
	// (openspec/changes/<name>/, see OpenFolderOf) that the openspec
	// strategy plans from; nil for the other strategies, which plan from
	// the spec files.
	Folders map[string]string `json:"folders,omitempty"`
}

// NewFingerprint hashes the inputs of a plan. specs maps a spec file (as
// named in set.cue) to its content; head is "" outside a git repository;
// living maps each file of main's openspec/specs to its content; folders
// is main's openspec/ for the openspec strategy (Record.OpenSpec), whose
// open change folders are hashed, nil for the others.
func NewFingerprint(cfg *config.Project, specs map[string][]byte, head string, living map[string][]byte, folders openspec.Tree) (Fingerprint, error) {
	planned := *cfg
	planned.Budgets, planned.Sentinel = config.Budgets{}, config.Sentinel{}
	planned.Planner.Replan, planned.Planner.MaxReplanCycles = "", 0
	planned.Learn = config.Learn{}
	planned.Learnings = maps.Clone(cfg.Learnings)
	for name, l := range planned.Learnings {
		l.Signature = ""
		planned.Learnings[name] = l
	}
	cfgJSON, err := json.Marshal(&planned)
	if err != nil {
		return Fingerprint{}, fmt.Errorf("fingerprint: %w", err)
	}
	f := Fingerprint{Config: hashOf(cfgJSON), Specs: map[string]string{}, Head: head}
	for name, data := range specs {
		f.Specs[name] = hashOf(data)
	}
	if len(living) > 0 {
		h := sha256.New()
		for _, name := range slices.Sorted(maps.Keys(living)) {
			fmt.Fprintf(h, "%s %s\n", name, hashOf(living[name]))
		}
		f.Living = hex.EncodeToString(h.Sum(nil))
	}
	if cfg.Planner.FromFolders() {
		f.Folders = folderHashes(folders)
	}
	f.Sum = f.sum()
	return f, nil
}

func (f Fingerprint) sum() string {
	h := sha256.New()
	fmt.Fprintf(h, "config %s\n", f.Config)
	for _, name := range slices.Sorted(maps.Keys(f.Specs)) {
		fmt.Fprintf(h, "spec %s %s\n", name, f.Specs[name])
	}
	fmt.Fprintf(h, "head %s\n", f.Head)
	if f.Living != "" {
		fmt.Fprintf(h, "living %s\n", f.Living)
	}
	for _, name := range slices.Sorted(maps.Keys(f.Folders)) {
		fmt.Fprintf(h, "folder %s %s\n", name, f.Folders[name])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Short is the first 12 hex digits of Sum, for display.
func (f Fingerprint) Short() string {
	s := strings.TrimPrefix(f.Sum, "sha256:")
	if len(s) > 12 {
		s = s[:12]
	}
	return s
}

// Changes lists, in words, what differs between the inputs the plan was
// made from (f) and the inputs now (now); empty when they are the same.
func (f Fingerprint) Changes(now Fingerprint) []string {
	var out []string
	if f.Config != now.Config {
		out = append(out, "the configuration (set.cue and its modules) changed")
	}
	for _, name := range slices.Sorted(maps.Keys(f.Specs)) {
		cur, ok := now.Specs[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("spec file %s is no longer listed", name))
		case cur != f.Specs[name]:
			out = append(out, fmt.Sprintf("spec file %s changed", name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(now.Specs)) {
		if _, ok := f.Specs[name]; !ok {
			out = append(out, fmt.Sprintf("spec file %s was added", name))
		}
	}
	if f.Head != now.Head {
		out = append(out, fmt.Sprintf("git HEAD moved from %s to %s", shortHead(f.Head), shortHead(now.Head)))
	}
	if f.Living != now.Living {
		out = append(out, LivingChanged)
	}
	for _, name := range slices.Sorted(maps.Keys(f.Folders)) {
		cur, ok := now.Folders[name]
		switch {
		case !ok:
			out = append(out, folderDir(name)+FolderClosed)
		case cur != f.Folders[name]:
			out = append(out, folderDir(name)+" changed")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(now.Folders)) {
		if _, ok := f.Folders[name]; !ok {
			out = append(out, folderDir(name)+" was added")
		}
	}
	return out
}

// LivingChanged is the change Fingerprint.Changes reports when main's
// living specs differ.
const LivingChanged = "the living specs on main (openspec/specs) changed"

// FolderClosed ends the change Fingerprint.Changes reports for an open
// change folder of the plan that main no longer has open:
// "openspec/changes/add-x is no longer open (archived or removed)".
const FolderClosed = " is no longer open (archived or removed)"

// ByRun reports whether change, one that Fingerprint.Changes reports, is
// one a run of the plan makes itself: it moves git HEAD, folds deltas
// into main's living specs, and archives the change folders it merges
// (openspec/changes/<c> moves under archive/). A run that resumes is
// excused those; any other change makes its saved plan stale.
func ByRun(change string) bool {
	return strings.HasPrefix(change, "git HEAD moved") || change == LivingChanged ||
		strings.HasPrefix(change, changesDir) && strings.HasSuffix(change, FolderClosed)
}

// changesDir holds OpenSpec's change folders; its archive/ holds those
// archived.
const changesDir = "openspec/changes/"

func folderDir(name string) string { return changesDir + name }

// OpenFolderOf reports the open change folder that a slash path relative
// to the project root is in: name when path is
// openspec/changes/<name>/... and name is neither archive (the archived
// folders) nor a dot directory, as OpenSpec lists its changes.
func OpenFolderOf(path string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(path, changesDir)
	if !ok {
		return "", false
	}
	name, _, ok = strings.Cut(rest, "/")
	if !ok || name == "" || name == "archive" || strings.HasPrefix(name, ".") {
		return "", false
	}
	return name, true
}

// folderHashes hashes the files of each open change folder of t, by the
// folder's name; nil when t has none.
func folderHashes(t openspec.Tree) map[string]string {
	files := map[string][]string{}
	for path := range t {
		if name, ok := OpenFolderOf(path); ok {
			files[name] = append(files[name], path)
		}
	}
	if len(files) == 0 {
		return nil
	}
	out := map[string]string{}
	for name, paths := range files {
		h := sha256.New()
		for _, path := range slices.Sorted(slices.Values(paths)) {
			fmt.Fprintf(h, "%s %s\n", strings.TrimPrefix(path, folderDir(name)+"/"), hashOf(t[path]))
		}
		out[name] = hex.EncodeToString(h.Sum(nil))
	}
	return out
}

func shortHead(h string) string {
	switch {
	case h == "":
		return "(none)"
	case len(h) > 12:
		return h[:12]
	}
	return h
}

func hashOf(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}
