package openspec

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/set-engine/set/engine/diag"
)

// This file reads what a change directory holds, and checks it as `openspec
// archive` does before it archives the change.

// deltaScan is what a change's specs/ directory holds.
type deltaScan struct {
	specsRel string
	// deltas are the capabilities' spec.md files (any depth below specs/),
	// sorted by capability.
	deltas []deltaFile
	// rootSpec reports a spec.md directly in specs/, which belongs to no
	// capability.
	rootSpec bool
	// unread are the other .md files with delta sections, which the
	// archive would not read (slash paths relative to specs/).
	unread []string
	// anyFile reports any file under specs/ (not counting dot files).
	anyFile bool
	// links are the symbolic links found, each an error.
	links []error
}

type deltaFile struct {
	capability string
	rel        string // slash path relative to the root
	src        string
}

// scanDeltas reads the change's specs/ directory. Entries whose name starts
// with "." are skipped; a symbolic link is recorded in links and not
// followed.
func scanDeltas(root, changeRel string) (*deltaScan, error) {
	s := &deltaScan{specsRel: changeRel + "/specs"}
	if err := CheckNoLinks(root, s.specsRel); err != nil {
		return nil, err
	}
	var walk func(rel string, segs []string) error
	walk = func(rel string, segs []string) error {
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) && len(segs) == 0 {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range entries { // sorted by name
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			erel := rel + "/" + name
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				s.links = append(s.links, CheckNoLinks(root, erel))
				continue
			case e.IsDir():
				if err := walk(erel, append(segs[:len(segs):len(segs)], name)); err != nil {
					return err
				}
				continue
			case !e.Type().IsRegular():
				continue
			}
			s.anyFile = true
			isSpec := name == "spec.md"
			if isSpec && len(segs) == 0 {
				s.rootSpec = true
				continue
			}
			if !isSpec && !strings.HasSuffix(jsLower(name), ".md") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(erel)))
			if err != nil {
				return err
			}
			src := decodeUTF8(data)
			if isSpec {
				s.deltas = append(s.deltas, deltaFile{capability: strings.Join(segs, "/"), rel: erel, src: src})
				continue
			}
			if d := parseDelta("", src); d.sections.added || d.sections.modified || d.sections.removed || d.sections.renamed {
				s.unread = append(s.unread, strings.TrimPrefix(erel, s.specsRel+"/"))
			}
		}
		return nil
	}
	if err := walk(s.specsRel, nil); err != nil {
		return nil, err
	}
	sort.Slice(s.deltas, func(i, j int) bool { return s.deltas[i].capability < s.deltas[j].capability })
	return s, nil
}

// reAnyDeltaHeading finds a delta section heading on any line of a file,
// the test by which the CLI decides that a change has delta specs to
// validate.
var reAnyDeltaHeading = js(`^##` + reS + `+(` + ci("ADDED") + `|` + ci("MODIFIED") + `|` + ci("REMOVED") + `|` + ci("RENAMED") + `)` + reS + `+` + ci("Requirements"))

func hasDeltaHeading(src string) bool {
	for _, l := range strings.FieldsFunc(src, jsIsLineTerminator) {
		if reAnyDeltaHeading.MatchString(l) {
			return true
		}
	}
	return false
}

// validateChange checks the change's delta specs as the CLI does before it
// archives a change that has some (validateChangeDeltaSpecs): a change
// whose specs/ holds no delta heading at all and no stray file is not
// validated here (a spec.md without operations is refused when applied).
// strict is `openspec validate <change> --strict` instead: every change is
// validated, and a warning (a requirement without SHALL or MUST, one
// outside the delta sections) is a problem too. It returns the problems
// found, each a diag.Diagnostic.
func validateChange(root, changeRel string, scan *deltaScan, strict bool) ([]error, error) {
	skip, err := readMarker(root, changeRel, "skip_specs")
	if err != nil {
		return nil, err
	}
	validate := strict || scan.rootSpec || len(scan.unread) > 0
	if !validate {
		validate = skip.invalid != "" || (skip.declared && scan.anyFile)
	}
	for _, d := range scan.deltas {
		validate = validate || hasDeltaHeading(d.src)
	}
	if !validate {
		return nil, nil
	}
	var errs []error
	if scan.rootSpec {
		errs = append(errs, diag.Errorf(scan.specsRel+"/spec.md", 0, "a delta spec must be in a capability's directory (specs/<capability>/spec.md); this one would not be archived"))
	}
	ops := 0
	for _, d := range scan.deltas {
		delta := parseDelta(d.capability, d.src)
		ops += delta.ops()
		for _, dg := range validateDelta(d.rel, delta) {
			if dg.Severity == diag.Error || strict {
				dg.Severity = diag.Error
				errs = append(errs, dg)
			}
		}
	}
	for _, u := range scan.unread {
		expected := strings.TrimSuffix(u, path.Base(u))
		if expected == "" {
			expected = u[:len(u)-len(".md")] + "/"
		}
		errs = append(errs, diag.Errorf(scan.specsRel+"/"+u, 0, "delta sections outside a capability's spec.md are not archived; move them into specs/%sspec.md", expected))
	}
	if skip.invalid != "" {
		errs = append(errs, diag.Errorf("", 0, "skip_specs cannot be honoured: %s", skip.invalid)) // the reason names the file
	}
	if skip.declared && scan.anyFile {
		errs = append(errs, diag.Errorf(changeRel+"/"+metadataFile, 0, "skip_specs is set, but files exist under %s; remove skip_specs or the files", scan.specsRel))
	}
	if ops == 0 && !scan.rootSpec && len(scan.unread) == 0 && !skip.declared {
		errs = append(errs, diag.Errorf(changeRel, 0, "the change has no delta operation (want specs/<capability>/spec.md with ## ADDED/MODIFIED/REMOVED/RENAMED Requirements, or skip_specs: true in its %s)", metadataFile))
	}
	return errs, nil
}

// namespaceFolder returns the changes nested in dir (as paths below
// openspec/changes/) when dir is not a change itself but a folder wrapping
// changes, which OpenSpec refuses to archive; nil otherwise.
func namespaceFolder(dir string) []string {
	if looksLikeChange(dir) {
		return nil
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") && !e.IsDir() {
			return nil // a change with content of its own
		}
	}
	var found []string
	var collect func(dir, prefix string, depth int)
	collect = func(dir, prefix string, depth int) {
		if depth > 3 {
			return
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") || !e.IsDir() {
				continue
			}
			child, id := filepath.Join(dir, e.Name()), prefix+"/"+e.Name()
			if looksLikeChange(child) {
				found = append(found, id)
				continue
			}
			collect(child, id, depth+1)
		}
	}
	collect(dir, filepath.Base(dir), 1)
	sort.Strings(found)
	return found
}

// looksLikeChange reports whether dir holds a change's own files: one of
// .openspec.yaml, proposal.md, tasks.md, design.md, or a file under specs/.
func looksLikeChange(dir string) bool {
	for _, f := range []string{metadataFile, "proposal.md", "tasks.md", "design.md"} {
		if fi, err := os.Lstat(filepath.Join(dir, f)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	var anyFile func(dir string) bool
	anyFile = func(dir string) bool {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			switch {
			case strings.HasPrefix(e.Name(), "."):
			case !e.IsDir():
				return true
			case anyFile(filepath.Join(dir, e.Name())):
				return true
			}
		}
		return false
	}
	return anyFile(filepath.Join(dir, "specs"))
}
