package openspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/set-engine/set/engine/diag"
	"go.yaml.in/yaml/v3"
)

// metadataFile is a change's metadata, openspec/changes/<change>/.openspec.yaml.
const metadataFile = ".openspec.yaml"

// marker is a boolean marker of a change's metadata (skip_specs,
// retire_capabilities) as `openspec archive` honours it: declared only when
// the metadata is valid, its value is true and its schema exists; invalid
// (with a reason) when the file mentions the marker but cannot be honoured.
type marker struct {
	declared bool
	invalid  string
}

var (
	reKebab = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
	reDate  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// readMarker reads key from the metadata of the change at changeRel under
// root. The file is read only if no component of its path is a symbolic
// link.
func readMarker(root, changeRel, key string) (marker, error) {
	rel := path.Join(changeRel, metadataFile)
	if err := CheckNoLinks(root, rel); err != nil {
		return marker{}, err
	}
	raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return marker{}, nil
	case err != nil:
		return marker{invalid: fmt.Sprintf("%s cannot be read (%v)", rel, err)}, nil
	}
	src := decodeUTF8(raw)
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		if mentions(src, key) {
			return marker{invalid: rel + " is not valid YAML"}, nil
		}
		return marker{}, nil
	}
	var top *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		top = doc.Content[0]
	}
	fields, problem := metadataFields(top)
	if problem == "" {
		v, ok := fields[key]
		if !ok || !isTrue(v) {
			return marker{}, nil
		}
		schema := fields["schema"].Value
		if schema == "spec-driven" {
			return marker{declared: true}, nil
		}
		fi, err := os.Stat(filepath.Join(root, "openspec", "schemas", schema, "schema.yaml"))
		if err == nil && fi.Mode().IsRegular() && !strings.ContainsAny(schema, `/\`) {
			return marker{declared: true}, nil
		}
		return marker{invalid: fmt.Sprintf("%s: unknown schema %q", rel, schema)}, nil
	}
	if v, ok := fields[key]; ok && !isFalse(v) {
		return marker{invalid: rel + ": " + problem}, nil
	}
	return marker{}, nil
}

// mentions reports whether a line of src starts a mapping entry named key
// (quoted or not), for a file that is not valid YAML.
func mentions(src, key string) bool {
	for _, l := range strings.FieldsFunc(src, jsIsLineTerminator) {
		l = jsTrimStart(l)
		for _, q := range []string{"", "'", `"`} {
			if rest, ok := strings.CutPrefix(l, q+key+q); ok && strings.HasPrefix(jsTrimStart(rest), ":") {
				return true
			}
		}
	}
	return false
}

func isTrue(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" && n.Value[0] != 'f' && n.Value[0] != 'F'
}
func isFalse(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" && !isTrue(n)
}

// metadataFields returns the entries of a metadata mapping and, when the
// metadata does not have the shape OpenSpec requires, the first problem
// (fields is then what could be read, for the marker's mention).
func metadataFields(top *yaml.Node) (map[string]*yaml.Node, string) {
	fields := map[string]*yaml.Node{}
	if top == nil || top.Kind != yaml.MappingNode {
		return fields, "the metadata is not a mapping"
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		fields[top.Content[i].Value] = top.Content[i+1]
	}
	isStr := func(n *yaml.Node) bool {
		t := n.ShortTag()
		return n.Kind == yaml.ScalarNode && (t == "!!str" || t == "!!timestamp")
	}
	if s, ok := fields["schema"]; !ok || !isStr(s) || s.Value == "" {
		return fields, "schema: a non-empty string is required"
	}
	if c, ok := fields["created"]; ok && (!isStr(c) || !reDate.MatchString(c.Value)) {
		return fields, "created: want YYYY-MM-DD"
	}
	if g, ok := fields["goal"]; ok && (!isStr(g) || g.Value == "") {
		return fields, "goal: want a non-empty string"
	}
	if a, ok := fields["affected_areas"]; ok {
		if a.Kind != yaml.SequenceNode {
			return fields, "affected_areas: want a list of strings"
		}
		for _, e := range a.Content {
			if !isStr(e) || e.Value == "" {
				return fields, "affected_areas: want a list of non-empty strings"
			}
		}
	}
	if in, ok := fields["initiative"]; ok {
		if in.Kind != yaml.MappingNode || len(in.Content) != 4 {
			return fields, "initiative: want store and id"
		}
		for i := 0; i+1 < len(in.Content); i += 2 {
			k, v := in.Content[i].Value, in.Content[i+1]
			if (k != "store" && k != "id") || !isStr(v) || !reKebab.MatchString(v.Value) {
				return fields, "initiative: want a kebab-case store and id"
			}
		}
	}
	for _, k := range []string{"skip_specs", "retire_capabilities"} {
		if v, ok := fields[k]; ok && (v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool") {
			return fields, k + ": want true or false"
		}
	}
	return fields, ""
}

// DependsOnKey is the .openspec.yaml field in which a change lists the
// changes it comes after: a list of change names. OpenSpec neither reads
// nor refuses it (its metadata schema drops unknown keys, and the archive
// moves the file as it is); set documents and reads it.
const DependsOnKey = "depends_on"

// readDependsOn reads DependsOnKey from the metadata src of the file rel:
// each name with its line, and a problem, at its line, for a value that
// is not a list of kebab-case change names. A file that is not valid YAML
// is a problem only when it mentions the key; a file without the key
// depends on nothing. The other fields are not checked here (readMarker
// holds the markers to OpenSpec's rules; OpenSpec ignores the rest).
func readDependsOn(rel, src string) ([]NamedLine, diag.List) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		if mentions(src, DependsOnKey) {
			return nil, diag.List{diag.Errorf(rel, 0, "%s cannot be read: the file is not valid YAML (%v)", DependsOnKey, err)}
		}
		return nil, nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != DependsOnKey {
			continue
		}
		v := top.Content[i+1]
		if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
			return nil, nil
		}
		if v.Kind != yaml.SequenceNode {
			return nil, diag.List{diag.Errorf(rel, v.Line, "%s: want a list of change names, as in %s: [add-links]", DependsOnKey, DependsOnKey)}
		}
		var names []NamedLine
		var ds diag.List
		for _, e := range v.Content {
			if e.Kind != yaml.ScalarNode || e.ShortTag() != "!!str" || !reKebab.MatchString(e.Value) {
				ds = append(ds, diag.Errorf(rel, e.Line, "%s: %q is not a change name (want kebab-case, the name of a folder under openspec/changes/)", DependsOnKey, e.Value))
				continue
			}
			names = append(names, NamedLine{Name: e.Value, Line: e.Line})
		}
		return names, ds
	}
	return nil, nil
}
