package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	set "github.com/set-engine/set"
)

func versionCommand() command {
	return command{
		name:    "version",
		summary: "print the version of set and of its embedded CUE module",
		usage: `Usage: setctl version [--json]

Version prints the version of set, the version at which it serves the
embedded CUE module github.com/set-engine/set@v0 (the one cue.mod/module.cue
must depend on), and the versions it was built with.

Examples:
  setctl version
  setctl version --json
`,
		run: runVersion,
	}
}

type versionInfo struct {
	Version       string `json:"version"`
	Module        string `json:"module"`
	ModuleVersion string `json:"moduleVersion"`
	CUE           string `json:"cue"`
	Go            string `json:"go"`
	Revision      string `json:"revision,omitempty"`
}

func runVersion(e *env, args []string) int {
	c := versionCommand()
	fs := c.flagSet(e)
	asJSON := fs.Bool("json", false, "print the versions as JSON")
	if code, done := c.parse(e, fs, args); done {
		return code
	}
	v := versionInfo{
		Version:       set.ModuleVersion,
		Module:        set.ModulePath,
		ModuleVersion: set.ModuleVersion,
		CUE:           "unknown",
		Go:            runtime.Version(),
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "cuelang.org/go" {
				v.CUE = d.Version
			}
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v.Revision = s.Value
			}
		}
	}
	if *asJSON {
		data, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", data)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "setctl %s\nCUE module %s at %s\nbuilt with cuelang.org/go %s, %s\n", v.Version, v.Module, v.ModuleVersion, v.CUE, v.Go)
	if v.Revision != "" {
		fmt.Fprintf(e.stdout, "revision %s\n", v.Revision)
	}
	return exitOK
}
