package decode

import (
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/parser"

	set "github.com/set-engine/set"
	"github.com/set-engine/set/engine/config"
)

// TestTypesMatchSchema checks that the Go types an explicit plan decodes
// into and the schema definitions that describe it name the same fields:
// a field on one side only fails. config.Change is the engine's one change
// type (plan files store it too), so it may carry fields the engine fills
// in and set.cue cannot write; those are listed here, with the reason.
func TestTypesMatchSchema(t *testing.T) {
	schema := embeddedSchema(t)
	tests := []struct {
		def    string
		goType reflect.Type
		// engineOnly are Go fields set.cue cannot write.
		engineOnly []string
	}{
		{"#Change", reflect.TypeFor[config.Change](), []string{
			"domain",  // the static planner sets it from the requirements
			"pos",     // where set.cue declared it; plan.Make sets it from the decoded positions
			"because", // why a planner ordered two changes; the openspec strategy sets it
		}},
		{"#Plan", reflect.TypeFor[config.Plan](), nil},
	}
	for _, tt := range tests {
		t.Run(tt.def, func(t *testing.T) {
			def := schema.LookupPath(cue.MakePath(cue.Def(tt.def)))
			if err := def.Err(); err != nil {
				t.Fatal(err)
			}
			cueFields := schemaFields(t, def)
			goFields := jsonFields(tt.goType)
			for _, f := range cueFields {
				if !slices.Contains(goFields, f) {
					t.Errorf("schema %s has field %q, but %s has no field with that json name", tt.def, f, tt.goType)
				}
			}
			for _, f := range goFields {
				switch {
				case slices.Contains(tt.engineOnly, f) && slices.Contains(cueFields, f):
					t.Errorf("%s field %q is listed as engine-only, but schema %s declares it", tt.goType, f, tt.def)
				case !slices.Contains(tt.engineOnly, f) && !slices.Contains(cueFields, f):
					t.Errorf("%s has field %q, but schema %s does not declare it", tt.goType, f, tt.def)
				}
			}
			for _, f := range tt.engineOnly {
				if !slices.Contains(goFields, f) {
					t.Errorf("engine-only field %q is not a field of %s", f, tt.goType)
				}
			}
		})
	}
}

// embeddedSchema builds the schema package the binary embeds.
func embeddedSchema(t *testing.T) cue.Value {
	t.Helper()
	paths, err := fs.Glob(set.Module, "schema/*.cue")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no embedded schema files (%v)", err)
	}
	inst := build.NewContext().NewInstance("schema", nil)
	for _, p := range paths {
		src, err := fs.ReadFile(set.Module, p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(p, src)
		if err != nil {
			t.Fatal(err)
		}
		if err := inst.AddSyntax(f); err != nil {
			t.Fatal(err)
		}
	}
	v := cuecontext.New().BuildInstance(inst)
	if err := v.Err(); err != nil {
		t.Fatal(err)
	}
	return v
}

// schemaFields are the regular and optional field names of a definition,
// sorted.
func schemaFields(t *testing.T, def cue.Value) []string {
	t.Helper()
	it, err := def.Fields(cue.Optional(true))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for it.Next() {
		out = append(out, it.Selector().Unquoted())
	}
	slices.Sort(out)
	return out
}

// jsonFields are the json names of a struct type's fields, sorted.
func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
