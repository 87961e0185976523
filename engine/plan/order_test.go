package plan

import (
	"reflect"
	"testing"
)

func sized(name, size string, deps ...string) Change {
	return Change{Name: name, Size: size, DependsOn: deps}
}

// TestNewDAGOrder: among ready changes the higher priority goes first
// (the heavier path below it), then the smaller name; a change always
// follows its dependencies.
func TestNewDAGOrder(t *testing.T) {
	d, err := NewDAG([]Change{
		sized("a", SizeS),
		sized("b", SizeS),
		sized("c", SizeL, "b"), // b's path weighs 1+5: b before a
		sized("d", SizeS, "a", "c", "c"),
		sized("e", SizeS),
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b", "c", "a", "d", "e"}; !reflect.DeepEqual(d.Order, want) {
		t.Errorf("Order = %v, want %v", d.Order, want)
	}
	wantPriority := map[string]int{"a": 2, "b": 7, "c": 6, "d": 1, "e": 1}
	if !reflect.DeepEqual(d.Priority, wantPriority) {
		t.Errorf("Priority = %v, want %v", d.Priority, wantPriority)
	}
	if got := d.Deps["d"]; !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Errorf("Deps[d] = %v, want [a c]", got)
	}
	if got := d.Dependents["c"]; !reflect.DeepEqual(got, []string{"d"}) {
		t.Errorf("Dependents[c] = %v, want [d]", got)
	}
}

func TestNewDAGCycle(t *testing.T) {
	for _, tt := range []struct {
		changes []Change
		want    string
	}{
		{[]Change{sized("b", SizeS, "a"), sized("a", SizeS, "c"), sized("c", SizeS, "b"), sized("z", SizeS, "a")},
			"dependency cycle: a → c → b → a"},
		{[]Change{sized("a", SizeS, "a")}, "dependency cycle: a → a"},
	} {
		_, err := NewDAG(tt.changes)
		if err == nil || err.Error() != tt.want {
			t.Errorf("NewDAG error = %v, want %q", err, tt.want)
		}
		if _, err := TopoSort(tt.changes); err == nil || err.Error() != tt.want {
			t.Errorf("TopoSort error = %v, want %q", err, tt.want)
		}
	}
}

func TestTopoSortKeepsChanges(t *testing.T) {
	in := []Change{sized("a", SizeS), sized("b", SizeL), sized("c", SizeS, "a")}
	got, err := TopoSort(in)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	// b weighs 5, a's path 1+1: b first.
	if want := []string{"b", "a", "c"}; !reflect.DeepEqual(names, want) {
		t.Errorf("TopoSort = %v, want %v", names, want)
	}
	if in[0].Name != "a" {
		t.Error("TopoSort reordered its argument")
	}
}
