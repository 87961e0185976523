// Command cuemodule writes set's CUE module, exactly the files the setctl
// binary embeds, into the directory it is given, and prints the version
// the binary serves it at: `make cue-publish` publishes that directory at
// that version with `cue mod publish`.
//
//	go run ./scripts/cuemodule DIR
package main

import (
	"fmt"
	"os"

	set "github.com/set-engine/set"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/cuemodule DIR")
		os.Exit(2)
	}
	if err := set.WriteModule(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "cuemodule:", err)
		os.Exit(1)
	}
	fmt.Println(set.ModuleVersion)
}
