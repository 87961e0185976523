package load

import (
	"fmt"
	"os"
	"path/filepath"
)

// FindRoot is the project directory of a command started in dir: the
// nearest of dir and its parents that holds set.cue and cue.mod/module.cue,
// as git finds .git. The search goes no higher than the top of the git work
// tree holding dir (the directory with .git): a project's changes are
// commits of that repository, so a set.cue above it (in a home directory,
// or around a vendored repository) is not its project. Outside git it goes
// up to the file system's root. When no directory holds both, the nearest
// one with set.cue is the root, so that Load says what it lacks; when none
// has set.cue, the error says how far the search went.
func FindRoot(dir string) (string, error) {
	start, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	var withConfig, top string
	for d := start; ; {
		if exists(filepath.Join(d, ConfigFile)) {
			if exists(ModuleFilePath(d)) {
				return d, nil
			}
			if withConfig == "" {
				withConfig = d
			}
		}
		if exists(filepath.Join(d, ".git")) {
			top = d
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	switch {
	case withConfig != "":
		return withConfig, nil
	case top == start:
		return "", fmt.Errorf("no %s in %s (run `setctl init` to create one)", ConfigFile, start)
	case top != "":
		return "", fmt.Errorf("no %s in %s or a parent directory up to the git work tree's top %s (run `setctl init` to create one)", ConfigFile, start, top)
	}
	return "", fmt.Errorf("no %s in %s or a parent directory (run `setctl init` to create one)", ConfigFile, start)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
