package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// projectInputs are the files a dashboard page's cache keys on: those the
// last load of the project at root read (slash paths relative to root),
// or, when it failed, every file such a load may read. It is the one
// piece of the learnings' and the requirements' caches that says when
// the project must be loaded again; each cache owns its own.
type projectInputs struct {
	root  string
	files []string
}

// loaded records the files a load of the project read.
func (in *projectInputs) loaded(files []string) { in.files = files }

// failed records that a load of the project failed: the inputs are then
// every CUE file at the root and cue.mod/module.cue, so that the next
// edit of any of them is read anew.
func (in *projectInputs) failed() {
	in.files, _ = filepath.Glob(filepath.Join(in.root, "*.cue"))
	for i, f := range in.files {
		in.files[i] = filepath.Base(f)
	}
	in.files = append(in.files, "cue.mod/module.cue")
}

// sum writes to h what the key of the inputs holds now: the names of
// the CUE files at the root, so that one the last load could not read
// because it was not there yet (learnings.cue, which setctl learn
// --write creates) is read once it is, and the content of each input.
func (in *projectInputs) sum(h io.Writer) {
	here, _ := filepath.Glob(filepath.Join(in.root, "*.cue"))
	for _, f := range here {
		fmt.Fprintf(h, "at the root: %s\n", filepath.Base(f))
	}
	for _, name := range in.files {
		fileSum(h, name, filepath.Join(in.root, filepath.FromSlash(name)))
	}
}

// fileSum writes to h the line "name sha256", the sum of the content of
// the file at path, or of why it could not be read.
func fileSum(h io.Writer, name, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		data = []byte("(unreadable: " + err.Error() + ")")
	}
	fmt.Fprintf(h, "%s %x\n", name, sha256.Sum256(data))
}
