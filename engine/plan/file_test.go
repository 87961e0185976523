package plan

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/set-engine/set/engine/spec"
)

func samplePlan() *Plan {
	return &Plan{
		Version:     FormatVersion,
		Project:     "demo",
		Strategy:    "static",
		Fingerprint: Fingerprint{Sum: "sha256:00", Config: "c", Specs: map[string]string{"spec.md": "s"}, Head: "h"},
		Changes: []Change{
			{Name: "a", Type: "feature", Size: "S", Requirements: []string{"REQ-A-01"}, DependsOn: []string{}},
		},
		Requirements: []spec.Requirement{{ID: "REQ-A-01", Title: "t", Domain: "a", File: "spec.md", Line: 3,
			Scenarios: []spec.Scenario{{Name: "s", When: []string{"w"}, Then: []string{"t"}, Line: 4}}}},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	want := samplePlan()
	if err := Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", got, want)
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"version": 2}`, "plan file version 2 is not supported by this set (it reads version 1)"},
		{`{"version": 1, "bogus": true}`, `unknown field "bogus"`},
		{`{"version": 1} {}`, "unexpected data after the plan"},
		{`not json`, "not a plan file"},
	} {
		_, err := Decode([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Decode(%s) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// FuzzDecode feeds arbitrary bytes to the plan decoder: it must not panic,
// and a plan it accepts must survive validation and re-encoding unchanged.
func FuzzDecode(f *testing.F) {
	good, _ := Encode(samplePlan())
	f.Add(good)
	f.Add([]byte(`{"version":1,"changes":[{"name":"a","dependsOn":["a"]}]}`))
	f.Add([]byte(`{"version":1,"changes":[{"name":"a","dependsOn":["b"]},{"name":"b","dependsOn":["a"]}]}`))
	f.Add([]byte(`{"version":1,"deferred":[{"requirement":"REQ-X-01","reason":""}]}`))
	f.Add([]byte(`{"version":1,"requirements":[{"id":"REQ-X-01","dependsOn":["REQ-X-01"]}],"changes":[{"name":"x","requirements":["REQ-X-01","REQ-X-01"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data)
		if err != nil {
			return
		}
		_ = Validate(p, Limits{MaxRequirementsPerChange: 6})
		_ = FindCycle(p)
		enc, err := Encode(p)
		if err != nil {
			t.Fatalf("Encode of a decoded plan: %v", err)
		}
		again, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode of an encoded plan: %v", err)
		}
		if !reflect.DeepEqual(p, again) {
			t.Fatalf("re-encoding changed the plan")
		}
	})
}
