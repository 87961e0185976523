package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"

	"github.com/set-engine/set/engine/spec"
)

// Work identifies what the named change is asked to do: its requirements,
// each with its standing against main's living specs and what it says
// (spec.Content). Two plans that give a change the same Work ask it for the
// same delta, so a run may carry the change's progress from one to the
// other; any other difference makes it new work. For the openspec
// strategy the change is its folder, so Work covers every file of it
// (Fingerprint.Folders: its proposal, design and tasks too): a folder
// edited between two plans is new work. It is "" for a change the plan does not have.
func (p *Plan) Work(name string) string {
	c, ok := p.Change(name)
	if !ok {
		return ""
	}
	type item struct {
		Standing spec.Standing
		Content  spec.Content
	}
	items := make([]item, 0, len(c.Requirements))
	for _, id := range c.Requirements {
		r, _ := p.Requirement(id)
		items = append(items, item{p.Standing(id), spec.ContentOf(r)})
	}
	var v any = items // as before folders: the Work of other strategies never moves
	if folder, ok := p.Fingerprint.Folders[name]; ok {
		v = struct {
			Items  []item
			Folder string
		}{items, folder}
	}
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain strings and lists: Marshal cannot fail
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ChangeFolder is what the named change's OpenSpec change folder is
// written from (see spec.ChangeFolder): its requirements with their
// standings, its scope, and the Purposes of the capabilities it creates.
func (p *Plan) ChangeFolder(name string) spec.ChangeFolderInput {
	in := spec.ChangeFolderInput{Change: name, SpecFiles: slices.Sorted(maps.Keys(p.Fingerprint.Specs))}
	c, ok := p.Change(name)
	if !ok {
		return in
	}
	in.Scope = c.Scope
	for _, id := range c.Requirements {
		r, _ := p.Requirement(id)
		st := p.Standing(id)
		in.Requirements = append(in.Requirements, spec.ChangeRequirement{Standing: st, Requirement: r})
		if purpose, ok := p.Purposes[st.Capability]; ok {
			if in.Purposes == nil {
				in.Purposes = map[string]string{}
			}
			in.Purposes[st.Capability] = purpose
		}
	}
	return in
}
