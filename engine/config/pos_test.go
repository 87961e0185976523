package config

import "testing"

func TestPosRel(t *testing.T) {
	for _, tt := range []struct {
		pos  Pos
		want string
	}{
		{Pos{File: "/p/set.cue", Offset: 40, Line: 5, Column: 10}, "set.cue:5:10"},
		{Pos{File: "/p/sub/gates.cue", Line: 2, Column: 1}, "sub/gates.cue:2:1"},
		{Pos{File: "/cache/set-modules/schema/gate.cue", Line: 7, Column: 3}, "/cache/set-modules/schema/gate.cue:7:3"},
		{Pos{File: "/pp/set.cue", Line: 1, Column: 1}, "/pp/set.cue:1:1"},
	} {
		if got := tt.pos.Rel("/p"); got != tt.want {
			t.Errorf("%+v.Rel(/p) = %q, want %q", tt.pos, got, tt.want)
		}
	}
}

func TestFieldErrorPosition(t *testing.T) {
	at := Pos{File: "/p/set.cue", Offset: 40, Line: 5, Column: 10}
	p := &Project{Positions: Positions{Root: "/p", At: map[string]Pos{"stacks.feature.review": at}}}
	path := []string{"stacks", "feature", "review"}
	e := p.FieldError(path, "gate %s cannot run", "review")
	path[0] = "changed"
	if e.Pos != at || e.Path[0] != "stacks" || e.Error() != "gate review cannot run" {
		t.Errorf("FieldError = %+v", e)
	}
	if e := p.FieldError([]string{"nope"}, "x"); e.Pos.IsValid() {
		t.Errorf("FieldError at an unrecorded path has position %+v", e.Pos)
	}
	if p.Pos("stacks.feature.review") != "set.cue:5:10" || p.Pos("nope") != "" {
		t.Errorf("Pos = %q, %q", p.Pos("stacks.feature.review"), p.Pos("nope"))
	}
}
