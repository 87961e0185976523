// Package set embeds the root CUE module github.com/set-engine/set@v0.
//
// The schema, stdlib and profiles below are the very bytes users import and
// the engine validates against: engine/load serves this tree to the CUE
// loader at ModuleVersion, so there is one source of truth for both.
package set

import "embed"

// ModuleVersion is the version at which the embedded CUE module is served.
// A project's cue.mod/module.cue depends on github.com/set-engine/set@v0 at
// this version.
const ModuleVersion = "v0.1.0"

// ModulePath is the CUE module path of the embedded module.
const ModulePath = "github.com/set-engine/set@v0"

// Module is the root CUE module: cue.mod/module.cue, schema/, stdlib/ and
// profiles/. Nothing else is embedded.
//
//go:embed cue.mod/module.cue schema/*.cue stdlib/*.cue profiles
var Module embed.FS
