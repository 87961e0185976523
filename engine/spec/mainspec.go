package spec

import "github.com/set-engine/set/engine/openspec"

// checkOpenSpec adds to the file's diagnostics the rules of `openspec
// validate --strict` (openspec.CheckMainSpec), and set's own: every
// requirement set reads in a main spec must be one OpenSpec reads, a
// heading directly under "## Requirements" (so "### REQ-AUTH-01: Log in" is
// set's extension of the format, and a bullet-form requirement is refused).
func (p *parser) checkOpenSpec(src []byte) {
	rep := openspec.CheckMainSpec(src)
	for _, is := range rep.Issues {
		p.errorf(is.Line, "%s", is.Message)
	}
	if !rep.HasRequirements {
		return
	}
	for _, r := range p.reqs {
		if !rep.Requirements[r.Line] && !rep.Outside[r.Line] {
			p.errorf(r.Line, `requirement %s is not a heading directly under "## Requirements", where OpenSpec reads requirements (write it as "### %s: %s")`, r.ID, r.ID, r.Title)
		}
	}
}
