package git

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGitCommandsLiveInGit: engine/git owns every git command set runs
// and the name of a change's branch; no production file elsewhere hands
// git an argument list (git.Run) or spells "set/"+change. Tests may.
func TestGitCommandsLiveInGit(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	pattern := regexp.MustCompile(`\bgit\.Run\(|"set/"\s*\+`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if path == root {
				return nil
			}
			if rel == "engine/git" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if code, _, _ := strings.Cut(line, "//"); pattern.MatchString(code) {
				t.Errorf("%s:%d: %s (use a named function of engine/git)", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
