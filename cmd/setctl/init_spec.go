package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The spec's place: init writes the spec template to defaultSpec, unless
// the project's docs/ is a documentation tree its tools build or its
// package ships (see publishedDocs), where set's spec would be published
// as a page of the project's manual: then to publishedDocsSpec.
const (
	defaultSpec       = "docs/spec.md"
	publishedDocsSpec = "spec/spec.md"
)

// specLocation is where init puts the spec of the project in dir,
// relative to it, with a slash, and why when it is not defaultSpec.
func specLocation(dir string) (spec, why string) {
	if why := publishedDocs(dir); why != "" {
		return publishedDocsSpec, why
	}
	return defaultSpec, ""
}

// publishedDocs says why dir's docs/ is built or shipped with the
// project, or "" when nothing in dir says it is. It looks at what builds
// a manual from docs/ (Sphinx's docs/conf.py; MkDocs' mkdocs.yml, whose
// docs_dir is docs/ unless it names another) and at what a package ships
// (package.json's files, MANIFEST.in's graft, include and
// recursive-include). A file it cannot read or parse says nothing.
func publishedDocs(dir string) string {
	if fileExists(filepath.Join(dir, "docs", "conf.py")) {
		return "docs/conf.py: Sphinx builds docs/"
	}
	if data, err := os.ReadFile(filepath.Join(dir, "mkdocs.yml")); err == nil && mkdocsDocsDir(data) == "docs" {
		return "mkdocs.yml: MkDocs builds docs/"
	}
	if data, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
		var pkg struct {
			Files []string `json:"files"`
		}
		if json.Unmarshal(data, &pkg) == nil {
			for _, f := range pkg.Files {
				if !strings.HasPrefix(f, "!") && underDocs(f) {
					return "package.json's files has " + f + ": npm publishes docs/"
				}
			}
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "MANIFEST.in")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			words := strings.Fields(sc.Text())
			if len(words) >= 2 && (words[0] == "graft" || words[0] == "include" || words[0] == "recursive-include") && underDocs(words[1]) {
				return "MANIFEST.in: " + strings.Join(words, " ") + " ships docs/ in the sdist"
			}
		}
	}
	return ""
}

// mkdocsDocsDir is the docs_dir a mkdocs.yml gives, cleaned, or MkDocs'
// default, docs; "" when data is not YAML. It reads the top-level key
// only, so that the tags MkDocs configurations use elsewhere
// (!!python/name:…, !ENV) do not matter.
func mkdocsDocsDir(data []byte) string {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return ""
	}
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		m := doc.Content[0].Content
		for i := 0; i+1 < len(m); i += 2 {
			if m[i].Value == "docs_dir" {
				return path.Clean(strings.TrimPrefix(m[i+1].Value, "./"))
			}
		}
	}
	return "docs"
}

// underDocs says whether the path or glob p (from package.json's files or
// MANIFEST.in) is docs/ or under it.
func underDocs(p string) bool {
	p = strings.TrimPrefix(strings.TrimPrefix(p, "./"), "/")
	first, _, _ := strings.Cut(p, "/")
	return first == "docs"
}
