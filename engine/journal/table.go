package journal

import "fmt"

// Table is what one reader of the journal does with each type of event
// it handles, given the event's payload decoded: the state's projection
// (engine/state) and the lines setctl's views print are both Tables. A
// reader passes each call an argument of type A (what it works on: the
// state and the change, or how lines are coloured) and gets an R back.
//
// An entry handles the type of its payload (Payload.EventType), so no
// entry can be filed under the wrong type, and the decoding is written
// once, here: a payload that does not decode is an error of Handle, never
// a zero payload handed on.
type Table[A, R any] struct {
	entries map[Type]func(a A, e Event) (R, error)
}

// Entry is one entry of a Table: what a reader does with the events of
// one type (see On).
type Entry[A, R any] struct {
	typ    Type
	handle func(a A, e Event) (R, error)
}

// On is the entry that gives the events of T's type, with their payload
// decoded as T, to f.
func On[T Payload, A, R any](f func(a A, e Event, d T) R) Entry[A, R] {
	var p T
	return Entry[A, R]{typ: p.EventType(), handle: func(a A, e Event) (R, error) {
		d, err := Decode[T](e)
		if err != nil {
			var zero R
			return zero, err
		}
		return f(a, e, d), nil
	}}
}

// NewTable is the table of entries. Two entries of one type are a
// mistake of the reader's code: NewTable panics.
func NewTable[A, R any](entries ...Entry[A, R]) Table[A, R] {
	t := Table[A, R]{entries: make(map[Type]func(A, Event) (R, error), len(entries))}
	for _, en := range entries {
		if _, dup := t.entries[en.typ]; dup {
			panic(fmt.Sprintf("journal.NewTable: two entries for %s", en.typ))
		}
		t.entries[en.typ] = en.handle
	}
	return t
}

// Handle gives what t makes of e with a: the entry of e's type called
// with e's payload. handled is false, and r the zero R, when t has no
// entry for e's type (a type the reader ignores, or one of a newer set);
// err is the error of a payload that does not decode, and then no entry
// was called.
func (t Table[A, R]) Handle(a A, e Event) (r R, handled bool, err error) {
	h, ok := t.entries[e.Type]
	if !ok {
		return r, false, nil
	}
	r, err = h(a, e)
	return r, true, err
}

// Handles reports whether t has an entry for the events of type typ.
func (t Table[A, R]) Handles(typ Type) bool {
	_, ok := t.entries[typ]
	return ok
}
