package journal

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTableHandlesByPayloadType(t *testing.T) {
	tab := NewTable(
		On(func(prefix string, e Event, d MergedData) string { return prefix + d.Commit }),
		On(func(prefix string, e Event, d ArchivedData) string { return prefix + d.ArchiveDir }),
	)
	merged := Event{Seq: 3, Type: Merged, Data: json.RawMessage(`{"commit":"abc"}`)}
	if r, handled, err := tab.Handle("merged ", merged); r != "merged abc" || !handled || err != nil {
		t.Errorf("Handle(MERGED) = %q, %v, %v; want %q, true, nil", r, handled, err, "merged abc")
	}
	if !tab.Handles(Merged) || !tab.Handles(Archived) || tab.Handles(Dispatch) {
		t.Errorf("Handles: want MERGED and ARCHIVED only")
	}
	dispatch := Event{Seq: 4, Type: Dispatch, Data: json.RawMessage(`{}`)}
	if r, handled, err := tab.Handle("", dispatch); r != "" || handled || err != nil {
		t.Errorf("Handle(DISPATCH) = %q, %v, %v; want unhandled", r, handled, err)
	}
}

// A payload that does not decode is Handle's error, and its entry is not
// called with a zero payload.
func TestTableDecodingError(t *testing.T) {
	called := false
	tab := NewTable(On(func(_ struct{}, e Event, d MergedData) bool { called = true; return true }))
	bad := Event{Seq: 7, Type: Merged, Data: json.RawMessage(`{"commit":1}`)}
	_, handled, err := tab.Handle(struct{}{}, bad)
	if !handled || err == nil || !strings.HasPrefix(err.Error(), "event 7 (MERGED): ") || called {
		t.Errorf("Handle = handled %v, err %v, entry called %v; want handled, an error naming event 7, not called", handled, err, called)
	}
}

func TestTableTwoEntriesOfOneType(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewTable with two MERGED entries did not panic")
		}
	}()
	f := func(_ struct{}, e Event, d MergedData) int { return 0 }
	NewTable(On(f), On(f))
}
