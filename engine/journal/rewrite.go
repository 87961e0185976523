package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/set-engine/set/engine/atomicfile"
)

// Removed is what Remove took out of a run directory's journal.
type Removed struct {
	// Events counts the events removed, and Bytes the bytes of their
	// lines in events.jsonl (their copies in the change journals are
	// not counted).
	Events int
	Bytes  int64
}

// Remove rewrites the journal of the run directory setDir without the
// events drop reports, the only way events ever leave a journal (setctl
// prune removes whole runs with it). The caller holds the run lock
// (state.AcquireLock), so no Writer is open on the directory.
//
// Invariants:
//   - The events kept are the lines they were, byte for byte and in the
//     same order, Seqs included: a journal may start above Seq 1, and
//     have gaps where runs were, which Open (Seq goes on from the
//     highest), state.Apply and the readers accept.
//   - events.jsonl is replaced atomically: the kept lines go to a
//     temporary file in setDir, which is fsync'd and renamed over it, and
//     then setDir is fsync'd. A Remove killed before the rename leaves
//     the old journal whole (and a temporary file, which the next Remove
//     deletes); after it, the new one.
//   - Then every change journal is written again from the kept events
//     (one whose change has none left is deleted). A Remove killed
//     in between leaves change journals that begin with removed events:
//     Open writes such a journal again from events.jsonl, and deletes
//     the journal of a change that has no event left there.
//
// A journal with a corrupt line is an error and is left as it is; a
// torn final line is dropped with the removal.
func Remove(setDir string, drop func(Event) bool) (Removed, error) {
	return remove(setDir, drop, nil)
}

// Count is what Remove(setDir, drop) would remove, removing nothing.
func Count(setDir string, drop func(Event) bool) (Removed, error) {
	return split(setDir, drop, nil)
}

// split reads the journal in setDir and counts the events drop removes;
// every other event's line goes to keep (when set), with its newline. No
// journal removes nothing.
func split(setDir string, drop func(Event) bool, keep func(raw []byte, e Event) error) (removed Removed, err error) {
	path := filepath.Join(setDir, EventsFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return removed, nil
	}
	if err != nil {
		return removed, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	_, err = scan(f, path, func(raw []byte, e Event) error {
		if drop(e) {
			removed.Events++
			removed.Bytes += int64(len(raw))
			return nil
		}
		if keep == nil {
			return nil
		}
		if !bytes.HasSuffix(raw, []byte{'\n'}) {
			raw = append(raw, '\n') // a final event that lost its newline
		}
		return keep(raw, e)
	})
	if err != nil {
		return Removed{}, fmt.Errorf("journal: %w", err)
	}
	return removed, nil
}

// remove is Remove, calling beforeRename (if set) once the new
// events.jsonl is written and synced, before it is renamed over the old
// one: the crash tests kill the process there.
func remove(setDir string, drop func(Event) bool, beforeRename func()) (Removed, error) {
	var kept bytes.Buffer
	// byChange are the kept lines of each change.
	byChange := map[string]*bytes.Buffer{}
	removed, err := split(setDir, drop, func(raw []byte, e Event) error {
		kept.Write(raw)
		if e.Change != "" {
			if err := checkChange(e.Change); err != nil {
				return err
			}
			if byChange[e.Change] == nil {
				byChange[e.Change] = &bytes.Buffer{}
			}
			byChange[e.Change].Write(raw)
		}
		return nil
	})
	if err != nil || removed.Events == 0 {
		return removed, err
	}
	if err := removeTemps(setDir); err != nil {
		return Removed{}, err
	}
	if err := replace(filepath.Join(setDir, EventsFile), kept.Bytes(), beforeRename); err != nil {
		return Removed{}, err
	}
	if err := rewriteChangeJournals(setDir, byChange); err != nil {
		return removed, err
	}
	return removed, nil
}

// tempPrefix starts the name of the temporary file Remove writes the new
// events.jsonl to, in the run directory.
const tempPrefix = "." + EventsFile + ".tmp-"

// removeTemps deletes the temporary files of Removes killed before their
// rename.
func removeTemps(setDir string) error {
	temps, err := filepath.Glob(filepath.Join(setDir, tempPrefix+"*"))
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	for _, t := range temps {
		if err := os.Remove(t); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	return nil
}

// replace replaces path by data atomically (atomicfile.Write's steps,
// with the crash tests' hook before the rename).
func replace(path string, data []byte, beforeRename func()) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = tmp.Close()
	}
	if err != nil {
		return fmt.Errorf("journal: write %s: %w", tmp.Name(), err)
	}
	if beforeRename != nil {
		beforeRename()
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return atomicfile.SyncDir(dir)
}

// rewriteChangeJournals makes the journals directory of setDir hold the
// journal of each change of byChange, with its lines, and no other.
func rewriteChangeJournals(setDir string, byChange map[string]*bytes.Buffer) error {
	dir := filepath.Join(setDir, JournalsDir)
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("journal: %w", err)
	}
	for _, ent := range entries {
		change, ok := strings.CutSuffix(ent.Name(), ".jsonl")
		if !ok || ent.IsDir() || byChange[change] != nil {
			continue
		}
		if err := os.Remove(filepath.Join(dir, ent.Name())); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	if len(byChange) > 0 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	for change, lines := range byChange {
		if err := atomicfile.Write(ChangeJournal(setDir, change), lines.Bytes(), 0o644); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	if len(entries) == 0 {
		return nil // nothing was removed from it
	}
	return atomicfile.SyncDir(dir)
}
