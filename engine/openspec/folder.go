package openspec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/set-engine/set/engine/diag"
	"go.yaml.in/yaml/v3"
)

// This file reads the change folders people write with OpenSpec
// (`openspec new change`, /opsx:propose, or by hand) as set plans from
// them: every folder under openspec/changes/ but archive/, its delta specs
// read and checked as `openspec validate --strict` and `openspec archive`
// would, and whether the folders, folded in a given order, are ones
// OpenSpec would archive.

// Tree is a project's openspec/ directory as files: slash paths relative
// to the project root ("openspec/specs/links/spec.md") to their bytes, as
// git.FilesAt(main, "openspec") returns them. Every position a function
// of this file reports is a file of the tree at a line.
type Tree map[string][]byte

// Folder is one open change folder, openspec/changes/<Name>/.
type Folder struct {
	// Name is the folder's name, the change's.
	Name string
	// Deltas are its delta specs, sorted by capability; DeltaFiles gives
	// each capability's file (root-relative slash path).
	Deltas     []*Delta
	DeltaFiles map[string]string
	// DependsOn are the names its .openspec.yaml lists under depends_on
	// (a field set documents and OpenSpec keeps without reading), each
	// with its line in that file; MetadataFile is that file's path, ""
	// when the folder has none.
	DependsOn    []NamedLine
	MetadataFile string
	// Files are every file of the folder, keyed by their slash path
	// relative to the folder (".openspec.yaml", "proposal.md",
	// "specs/links/spec.md").
	Files map[string][]byte
}

// OpenChanges reads every change folder of t under openspec/changes/
// (archive/ and dot directories aside), sorted by name. A folder OpenSpec
// would refuse to validate (`openspec validate <name> --strict`: a delta
// without operations, a requirement without a scenario or without SHALL
// or MUST, one outside the delta sections, a FROM: without its TO:, a
// delta file outside a capability's spec.md, a skip_specs marker it cannot
// honour, no delta at all without skip_specs, a MODIFIED requirement that
// drops a scenario of main's spec, a spec-driven tasks.md without any
// checkbox or with a task numbered into another group or twice), or to
// archive before looking at the living specs (a folder of folders), is
// left out and its problems reported at their file and line; a
// depends_on that is not a list of change names is one such problem.
// The CLI accepts a name that is not kebab-case and metadata of another
// shape, and so does OpenChanges. TestOpenChangesDiff holds it to the
// CLI.
func OpenChanges(t Tree) ([]*Folder, diag.List) {
	root, err := os.MkdirTemp("", "set-openspec-")
	if err != nil {
		return nil, diag.List{diag.Errorf("", 0, "reading the change folders: %v", err)}
	}
	defer os.RemoveAll(root)
	open := Tree{} // archived changes are not read
	for p, data := range t {
		if !strings.HasPrefix(p, changesDir+"/archive/") {
			open[p] = data
		}
	}
	if err := materialise(root, open); err != nil {
		return nil, diag.List{diag.Errorf("", 0, "reading the change folders: %v", err)}
	}
	var (
		folders []*Folder
		ds      diag.List
	)
	for _, name := range changeNames(t) {
		f, fds := readFolder(root, t, name)
		ds = append(ds, fds...)
		if f != nil && !fds.HasErrors() {
			folders = append(folders, f)
		}
	}
	return folders, ds
}

// CheckArchivable folds the folders of t into a copy of t's living specs
// in order, as `openspec archive <name> --yes` run on each in turn would,
// and returns, by folder name, why OpenSpec would refuse one: a MODIFIED,
// REMOVED or RENAMED requirement that does not exist by then, or a
// capability that does not exist yet, at the delta's file and line. A
// refused folder is skipped, so that every refusal is reported; an
// archivable one has no entry. t is never changed.
//
// The copy is t written to a temporary directory, where ArchiveChange
// archives each folder in turn; a name in order without a folder in t is
// refused as such.
func CheckArchivable(t Tree, order []string, now time.Time) map[string]diag.List {
	refused := map[string]diag.List{}
	root, err := os.MkdirTemp("", "set-openspec-")
	if err != nil {
		for _, name := range order {
			refused[name] = diag.List{diag.Errorf("", 0, "checking that OpenSpec would archive %s: %v", name, err)}
		}
		return refused
	}
	defer os.RemoveAll(root)
	if err := materialise(root, t); err != nil {
		for _, name := range order {
			refused[name] = diag.List{diag.Errorf("", 0, "checking that OpenSpec would archive %s: %v", name, err)}
		}
		return refused
	}
	for _, name := range order {
		changeRel := changesDir + "/" + name
		_, err := ArchiveChange(root, name, now)
		var ae *ArchiveError
		switch {
		case err == nil:
			continue
		case errors.Is(err, ErrNoDelta):
			refused[name] = diag.List{diag.Errorf(changeRel, 0, "no such change folder")}
		case errors.As(err, &ae):
			ds := make(diag.List, 0, len(ae.Problems))
			for _, p := range ae.Problems {
				ds = append(ds, asDiag(p, changeRel))
			}
			refused[name] = ds
		default:
			refused[name] = diag.List{asDiag(err, changeRel)}
		}
	}
	return refused
}

// changeNames are the open change folders of t (OpenFolderOf), sorted.
func changeNames(t Tree) []string {
	seen := map[string]bool{}
	for p := range t {
		if name, ok := OpenFolderOf(p); ok {
			seen[name] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// OpenFolderOf reports the open change folder that a slash path relative
// to the project root is in: name when path is
// openspec/changes/<name>/... and name is neither archive (the archived
// folders) nor a dot directory, as OpenSpec lists its changes. It is the
// one rule of what an open change folder is.
func OpenFolderOf(path string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(path, changesDir+"/")
	if !ok {
		return "", false
	}
	name, _, ok = strings.Cut(rest, "/")
	if !ok || name == "" || name == "archive" || strings.HasPrefix(name, ".") {
		return "", false
	}
	return name, true
}

// changesDir is where change folders are, relative to the project root.
const changesDir = "openspec/changes"

// readFolder reads and checks the change folder name of t, materialised
// under root; its problems are errors (the folder is then not usable).
func readFolder(root string, t Tree, name string) (*Folder, diag.List) {
	changeRel := changesDir + "/" + name
	if err := CheckChangeName(name); err != nil {
		return nil, diag.List{diag.Errorf(changeRel, 0, "%v", err)}
	}
	if nested := namespaceFolder(filepath.Join(root, filepath.FromSlash(changeRel))); len(nested) > 0 {
		return nil, diag.List{diag.Errorf(changeRel, 0, "not a change: a folder holding the change(s) %s; OpenSpec reads a change only directly under openspec/changes/", strings.Join(nested, ", "))}
	}
	scan, err := scanDeltas(root, changeRel)
	if err != nil {
		return nil, diag.List{asDiag(err, changeRel)}
	}
	var ds diag.List
	for _, l := range scan.links {
		ds = append(ds, asDiag(l, changeRel))
	}
	problems, err := validateChange(root, changeRel, scan, true)
	if err != nil {
		return nil, append(ds, asDiag(err, changeRel))
	}
	for _, p := range problems {
		ds = append(ds, asDiag(p, changeRel))
	}
	f := &Folder{Name: name, DeltaFiles: map[string]string{}, Files: map[string][]byte{}}
	for p, data := range t {
		if rel, ok := strings.CutPrefix(p, changeRel+"/"); ok && rel != "" && !strings.HasSuffix(rel, "/") {
			f.Files[rel] = data
		}
	}
	for _, d := range scan.deltas {
		delta := parseDelta(d.capability, d.src)
		f.Deltas = append(f.Deltas, delta)
		f.DeltaFiles[d.capability] = d.rel
		ds = append(ds, scenarioLoss(t, delta, d.rel)...)
	}
	if tasks, ok := f.Files["tasks.md"]; ok && usesSpecDriven(t, f.Files[metadataFile]) {
		ds = append(ds, taskFileIssues(changeRel+"/tasks.md", tasks)...)
	}
	if src, ok := f.Files[metadataFile]; ok {
		f.MetadataFile = changeRel + "/" + metadataFile
		deps, dds := readDependsOn(f.MetadataFile, decodeUTF8(src))
		f.DependsOn = deps
		ds = append(ds, dds...)
	}
	return f, ds
}

// scenarioLoss is the check `openspec validate <change> --strict` makes of
// a delta's MODIFIED requirements against the main spec of t (the archive
// makes it again against the spec as the changes before it leave it): one
// the main spec has, under its name or under a name the delta renames to
// it, must keep every scenario of the main spec's block.
func scenarioLoss(t Tree, d *Delta, deltaRel string) diag.List {
	specRel := "openspec/specs/" + d.Capability + "/spec.md"
	src, ok := t[specRel]
	if !ok || len(d.Modified) == 0 {
		return nil
	}
	current := map[string]RequirementBlock{}
	for _, b := range splitLiving(decodeUTF8(src)).blocks {
		current[normalizeRequirementName(b.Name)] = b
	}
	renamedFrom, renamedAway := map[string]string{}, map[string]bool{}
	for _, r := range d.Renamed {
		renamedFrom[normalizeRequirementName(r.To)] = normalizeRequirementName(r.From)
		renamedAway[normalizeRequirementName(r.From)] = true
	}
	var ds diag.List
	for _, m := range d.Modified {
		key := normalizeRequirementName(m.Name)
		if renamedAway[key] {
			continue
		}
		visited := map[string]bool{}
		for k, ok := key, true; ok && !visited[k]; k, ok = renamedFrom[k] {
			visited[k] = true
			cur, found := current[k]
			if !found {
				continue
			}
			if missing := missingScenarios(cur.Raw, m.Raw); len(missing) > 0 {
				ds = append(ds, diag.Errorf(deltaRel, m.Line, "MODIFIED requirement %q drops the scenario(s) %s that %s has; a MODIFIED block replaces the whole requirement, so copy them into it", m.Name, quoteAll(missing), specRel))
			}
			break
		}
	}
	return ds
}

// usesSpecDriven reports whether a change whose .openspec.yaml is meta
// (nil: none) uses OpenSpec's built-in spec-driven schema, whose tasks.md
// `openspec validate --strict` lints: the schema its metadata names, else
// openspec/config.yaml's, else spec-driven; metadata OpenSpec cannot load
// resolves no schema, and a project schema of that name replaces the
// built-in one.
func usesSpecDriven(t Tree, meta []byte) bool {
	if _, ok := t["openspec/schemas/spec-driven/schema.yaml"]; ok {
		return false
	}
	schemaOf := func(src []byte) (string, bool) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(decodeUTF8(src)), &doc) != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
			return "", false
		}
		fields, problem := metadataFields(doc.Content[0])
		if s, ok := fields["schema"]; ok && s.Kind == yaml.ScalarNode {
			return s.Value, problem == ""
		}
		return "", problem == ""
	}
	if meta != nil {
		name, ok := schemaOf(meta)
		return ok && name == "spec-driven"
	}
	if config, ok := t["openspec/config.yaml"]; ok {
		var cfg struct {
			Schema string `yaml:"schema"`
		}
		if yaml.Unmarshal([]byte(decodeUTF8(config)), &cfg) == nil && cfg.Schema != "" {
			return cfg.Schema == "spec-driven"
		}
	}
	return true
}

// asDiag is err as a diagnostic: itself when it is one, else an error at
// the change folder (a RefusedPathError at its path).
func asDiag(err error, changeRel string) diag.Diagnostic {
	var d diag.Diagnostic
	if errors.As(err, &d) {
		return d
	}
	var rp *RefusedPathError
	if errors.As(err, &rp) {
		return diag.Errorf(rp.Path, 0, "%s", rp.Reason)
	}
	return diag.Errorf(changeRel, 0, "%v", err)
}

// materialise writes the files of t under root. A path that is not local
// (absolute, or climbing out with "..") is refused.
func materialise(root string, t Tree) error {
	for p, data := range t {
		if strings.HasSuffix(p, "/") {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(p)) {
			return fmt.Errorf("%q is not a path inside the project", p)
		}
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// NormalizeName is the name OpenSpec matches requirements by: trimmed of
// JavaScript white space. Two names name the same requirement when their
// NormalizeName are equal.
func NormalizeName(name string) string { return normalizeRequirementName(name) }
