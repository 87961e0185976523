package git

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ExecSnapshot is what makes git run programs in a repository, as it
// stands in the repository's common git directory (the one every worktree
// shares, `git rev-parse --git-common-dir`): the files of its hooks
// directories and the configuration entries that name a program or pull
// in another file (see runsPrograms). An agent works in a worktree of its
// own, but anything it writes there reaches every worktree and the user's
// checkout: a hook it plants runs on the user's next commit.
//
// The configuration is read from the repository's own files (config,
// config.worktree and each worktree's config.worktree) with `git config
// --file`, so the user's global and system configuration, which no agent's
// worktree holds, is no part of it. Take one before agents run, compare it
// (Diff) with one taken later, and Restore undoes the differences; what
// the two have alike is never touched.
type ExecSnapshot struct {
	// commonDir is the repository's common git directory, absolute; top
	// the work tree it belongs to (its parent, when it is named .git),
	// which relative hook paths and the names of changes start from.
	commonDir, top string
	// hooks are the regular files and symlinks at the top of each hooks
	// directory, by path relative to top (slash-separated).
	hooks map[string]hookFile
	// config are the watched entries, by file (relative to commonDir)
	// and key as `git config --list` names it (section and variable
	// lower-case); each key's values in the file's order.
	config map[configEntry][]string
	// configData is each configuration file's content: a file unchanged
	// since an earlier snapshot (see Now) has its entries taken from
	// there, without running git.
	configData map[string][]byte
}

// hookFile is a file of a hooks directory: its mode (type and
// permissions) and content (a symlink's target), kept whole so that
// Restore can write it back.
type hookFile struct {
	mode fs.FileMode
	data []byte
}

func (h hookFile) same(o hookFile) bool {
	return h.mode == o.mode && bytes.Equal(h.data, o.data)
}

// configEntry is a key of one configuration file.
type configEntry struct{ file, key string }

// noValue stands for a value-less entry ("[core] fsmonitor"), which git
// reads as true. A configuration value never holds a NUL.
const noValue = "\x00"

// ExecChange is one difference between two ExecSnapshots: a hook or a
// configuration key added, changed or removed.
type ExecChange struct {
	// Hook is the hook's path relative to the repository's top
	// (".git/hooks/post-commit"); "" for a configuration key.
	Hook string
	// File is the configuration file relative to the common git
	// directory ("config", "worktrees/w/config.worktree") and Key its
	// key ("core.hookspath"), for a configuration key.
	File, Key string
	// What is "added", "changed" or "removed".
	What string
	// Before and After are a configuration key's values.
	Before, After []string
}

// String names the change as a user reads it: "hook post-commit added",
// "core.hooksPath set to "/tmp/h"", "alias.x set to "!sh" in
// worktrees/w/config.worktree".
func (c ExecChange) String() string {
	if c.Hook != "" {
		dir, name := filepath.Split(filepath.FromSlash(c.Hook))
		s := "hook " + name + " " + c.What
		if d := filepath.ToSlash(filepath.Clean(dir)); d != ".git/hooks" {
			s += " in " + d
		}
		return s
	}
	var s string
	key := displayKey(c.Key)
	switch c.What {
	case "added":
		s = key + " set to " + showValues(c.After)
	case "changed":
		s = key + " changed from " + showValues(c.Before) + " to " + showValues(c.After)
	default:
		s = key + " removed (was " + showValues(c.Before) + ")"
	}
	if c.File != "config" {
		s += " in " + c.File
	}
	return s
}

// KeyName is the change's configuration key as git-config(1) spells it
// ("core.hooksPath"); "" for a hook.
func (c ExecChange) KeyName() string {
	if c.Key == "" {
		return ""
	}
	return displayKey(c.Key)
}

// displayKey is a key as git-config(1) spells it ("core.hooksPath"),
// where `git config --list` gives it lower-case: section and variable
// names are case-insensitive, a subsection's case is kept.
func displayKey(key string) string {
	section, rest, _ := strings.Cut(key, ".")
	sub, name := "", rest
	if i := strings.LastIndex(rest, "."); i >= 0 {
		sub, name = rest[:i+1], rest[i+1:]
	}
	if s, ok := camelCase[section]; ok {
		section = s
	}
	if n, ok := camelCase[name]; ok && section != "alias" {
		name = n
	}
	return section + "." + sub + name
}

// camelCase spells the watched names that git-config(1) writes with
// capitals (see runsPrograms).
var camelCase = map[string]string{
	"includeif": "includeIf",
	"hookspath": "hooksPath", "sshcommand": "sshCommand", "askpass": "askPass", "gitproxy": "gitProxy",
	"alternaterefscommand": "alternateRefsCommand", "packobjectshook": "packObjectsHook",
	"worktreeconfig": "worktreeConfig", "defaultkeycommand": "defaultKeyCommand",
	"smtpserver": "smtpServer",
}

// showValues quotes a key's values for a message, each cut to a line's
// worth.
func showValues(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		if v == noValue {
			out[i] = "true"
			continue
		}
		if r := []rune(v); len(r) > 80 {
			v = string(r[:79]) + "…"
		}
		out[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(out, ", ")
}

// TakeExecSnapshot reads the ExecSnapshot of the repository dir is in.
func TakeExecSnapshot(ctx context.Context, dir string) (*ExecSnapshot, error) {
	s, err := locateExecSnapshot(ctx, dir)
	if err != nil {
		return nil, err
	}
	return s, s.read(ctx, nil)
}

// locateExecSnapshot is an empty snapshot of the repository dir is in:
// its common git directory and top, found.
func locateExecSnapshot(ctx context.Context, dir string) (*ExecSnapshot, error) {
	// Relative to dir, where git runs (--path-format=absolute needs git
	// 2.31).
	common, err := Run(ctx, dir, "rev-parse", "--git-common-dir")
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(common) {
		if common, err = filepath.Abs(filepath.Join(dir, common)); err != nil {
			return nil, err
		}
	}
	s := &ExecSnapshot{commonDir: filepath.Clean(common), top: filepath.Clean(common)}
	if filepath.Base(s.commonDir) == ".git" {
		s.top = filepath.Dir(s.commonDir)
	}
	return s, nil
}

// read fills s with what its repository holds now, taking the entries
// of a configuration file whose content is that of the file in earlier
// (nil: none) from there. It reads the hooks directories earlier read,
// or, with no earlier, those s's configuration names.
func (s *ExecSnapshot) read(ctx context.Context, earlier *ExecSnapshot) error {
	s.hooks, s.config, s.configData = map[string]hookFile{}, map[configEntry][]string{}, map[string][]byte{}
	files, err := s.configFiles()
	if err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(s.commonDir, filepath.FromSlash(f)))
		if os.IsNotExist(err) {
			continue // removed meanwhile (a worktree that went)
		}
		if err != nil {
			return err
		}
		if earlier != nil {
			if old, ok := earlier.configData[f]; ok && bytes.Equal(old, data) {
				for k, vs := range earlier.config {
					if k.file == f {
						s.config[k] = vs
					}
				}
				s.configData[f] = data
				continue
			}
		}
		if err := s.readConfig(ctx, f); err != nil {
			return err
		}
		// The content is kept only when git read that very content: a
		// file written in between is read by git again next time.
		if again, err := os.ReadFile(filepath.Join(s.commonDir, filepath.FromSlash(f))); err == nil && bytes.Equal(again, data) {
			s.configData[f] = data
		}
	}
	dirs := s.hookDirs
	if earlier != nil {
		dirs = earlier.hookDirs
	}
	for _, d := range dirs() {
		if err := s.readHooks(d); err != nil {
			return err
		}
	}
	return nil
}

// configFiles are the repository's configuration files that exist,
// relative to its common directory: config, config.worktree (the main
// worktree's, read with extensions.worktreeConfig) and each worktree's
// config.worktree.
func (s *ExecSnapshot) configFiles() ([]string, error) {
	files := []string{"config", "config.worktree"}
	wts, err := filepath.Glob(filepath.Join(s.commonDir, "worktrees", "*", "config.worktree"))
	if err != nil {
		return nil, err
	}
	for _, w := range wts {
		rel, _ := filepath.Rel(s.commonDir, w)
		files = append(files, filepath.ToSlash(rel))
	}
	var out []string
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(s.commonDir, f)); err == nil {
			out = append(out, f)
		} else if !os.IsNotExist(err) {
			return nil, err
		}
	}
	return out, nil
}

// readConfig records the watched entries of one configuration file.
func (s *ExecSnapshot) readConfig(ctx context.Context, file string) error {
	out, err := run(ctx, s.commonDir, "config", "--file", filepath.Join(s.commonDir, file), "--list", "-z")
	if err != nil {
		if os.IsNotExist(statErr(filepath.Join(s.commonDir, file))) {
			return nil // removed meanwhile (a worktree that went)
		}
		return err
	}
	for _, e := range strings.Split(out, "\x00") {
		if e == "" {
			continue
		}
		key, value, ok := strings.Cut(e, "\n")
		if !ok {
			value = noValue
		}
		if runsPrograms(key) {
			k := configEntry{file, key}
			s.config[k] = append(s.config[k], value)
		}
	}
	return nil
}

func statErr(path string) error {
	_, err := os.Stat(path)
	return err
}

// hookDirs are the hooks directories git may run hooks from, absolute:
// the common directory's hooks and each directory a core.hooksPath of the
// snapshot names inside the repository (its work tree or its git
// directory). One outside the repository is the user's own business: the
// key that names it is what a change reports.
func (s *ExecSnapshot) hookDirs() []string {
	dirs := []string{filepath.Join(s.commonDir, "hooks")}
	for k, vs := range s.config {
		if k.key != "core.hookspath" {
			continue
		}
		for _, v := range vs {
			if v == noValue || v == "" {
				continue
			}
			d := v
			if strings.HasPrefix(d, "~/") {
				continue // the user's home: outside the repository
			}
			if !filepath.IsAbs(d) {
				d = filepath.Join(s.top, d)
			}
			d = filepath.Clean(d)
			if s.inside(d) && !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// inside reports whether path is in the repository's work tree or its
// common git directory.
func (s *ExecSnapshot) inside(path string) bool {
	for _, root := range []string{s.top, s.commonDir} {
		if rel, err := filepath.Rel(root, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// readHooks records the regular files and symlinks at the top of the
// hooks directory dir (git runs nothing from its subdirectories).
func (s *ExecSnapshot) readHooks(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		info, err := os.Lstat(path)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return err
		}
		var data []byte
		switch {
		case info.Mode().IsRegular():
			data, err = os.ReadFile(path)
		case info.Mode()&fs.ModeSymlink != 0:
			var target string
			target, err = os.Readlink(path)
			data = []byte(target)
		default:
			continue
		}
		if err != nil {
			return err
		}
		s.hooks[s.rel(path)] = hookFile{mode: info.Mode() & (fs.ModeType | fs.ModePerm), data: data}
	}
	return nil
}

// rel is path relative to the repository's top, slash-separated.
func (s *ExecSnapshot) rel(path string) string {
	if r, err := filepath.Rel(s.top, path); err == nil {
		return filepath.ToSlash(r)
	}
	return filepath.ToSlash(path)
}

// Now is the snapshot of s's repository as it stands now, to Diff with
// s. It reads the hooks directories s read: a core.hooksPath changed
// since is a change of its key, and undoing the key makes the directory
// it names inert; the files there are left alone, since the key may name
// any directory, the user's source files among them.
func (s *ExecSnapshot) Now(ctx context.Context) (*ExecSnapshot, error) {
	now := &ExecSnapshot{commonDir: s.commonDir, top: s.top}
	if err := now.read(ctx, s); err != nil {
		return nil, err
	}
	return now, nil
}

// Diff lists what after has that s has not, or has otherwise: hooks and
// keys added, changed or removed, hooks first, each group in path order.
func (s *ExecSnapshot) Diff(after *ExecSnapshot) []ExecChange {
	var out []ExecChange
	for _, p := range unionKeys(s.hooks, after.hooks) {
		b, inBefore := s.hooks[p]
		a, inAfter := after.hooks[p]
		switch {
		case !inBefore:
			out = append(out, ExecChange{Hook: p, What: "added"})
		case !inAfter:
			out = append(out, ExecChange{Hook: p, What: "removed"})
		case !b.same(a):
			out = append(out, ExecChange{Hook: p, What: "changed"})
		}
	}
	keys := unionKeys(s.config, after.config)
	slices.SortFunc(keys, func(x, y configEntry) int {
		// config first, then config.worktree, then the worktrees'.
		if c := strings.Compare(x.file, y.file); c != 0 {
			return c
		}
		return strings.Compare(x.key, y.key)
	})
	for _, k := range keys {
		b, inBefore := s.config[k]
		a := after.config[k]
		switch {
		case !inBefore:
			out = append(out, ExecChange{File: k.file, Key: k.key, What: "added", After: a})
		case len(a) == 0:
			if after.gone(k.file) {
				continue // the worktree went, and its configuration with it
			}
			out = append(out, ExecChange{File: k.file, Key: k.key, What: "removed", Before: b})
		case !slices.Equal(a, b):
			out = append(out, ExecChange{File: k.file, Key: k.key, What: "changed", Before: b, After: a})
		}
	}
	return out
}

// gone reports whether file is a worktree's configuration whose worktree
// the repository no longer has.
func (s *ExecSnapshot) gone(file string) bool {
	if !strings.HasPrefix(file, "worktrees/") {
		return false
	}
	return os.IsNotExist(statErr(filepath.Dir(filepath.Join(s.commonDir, filepath.FromSlash(file)))))
}

// unionKeys is the keys of a and b, sorted where they are strings (the
// caller sorts others).
func unionKeys[K comparable, V any](a, b map[K]V) []K {
	var out []K
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	if ks, ok := any(out).([]string); ok {
		slices.Sort(ks)
	}
	return out
}

// Restore undoes what changed in the repository since s was taken and
// returns it (nil when nothing did): an added hook is removed, a changed
// or removed one written back as it was; an added key is unset, a changed
// or removed one given its values back. What has not changed is not
// touched, so the user's own hooks and keys stay as they were. A
// value-less entry comes back as "true", which git reads alike.
func (s *ExecSnapshot) Restore(ctx context.Context) ([]ExecChange, error) {
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	changes := s.Diff(now)
	for _, c := range changes {
		var err error
		if c.Hook != "" {
			err = s.restoreHook(c)
		} else {
			err = s.restoreKey(ctx, c)
		}
		if err != nil {
			return changes, fmt.Errorf("undoing %s: %w", c, err)
		}
	}
	return changes, nil
}

// restoreHook removes an added hook, or writes a changed or removed one
// back, by a rename, so git never runs half a hook.
func (s *ExecSnapshot) restoreHook(c ExecChange) error {
	path := filepath.Join(s.top, filepath.FromSlash(c.Hook))
	h, ok := s.hooks[c.Hook]
	if !ok {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	tmp := path + ".set-restore"
	_ = os.Remove(tmp)
	var err error
	if h.mode&fs.ModeSymlink != 0 {
		err = os.Symlink(string(h.data), tmp)
	} else {
		err = os.WriteFile(tmp, h.data, h.mode.Perm())
		if err == nil {
			err = os.Chmod(tmp, h.mode.Perm()) // past the umask
		}
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// restoreKey gives a key of one configuration file the values it had:
// none for an added one.
func (s *ExecSnapshot) restoreKey(ctx context.Context, c ExecChange) error {
	file := filepath.Join(s.commonDir, filepath.FromSlash(c.File))
	if _, err := run(ctx, s.commonDir, "config", "--file", file, "--unset-all", c.Key); err != nil && exitCode(err) != 5 {
		return err // 5: the key is not there
	}
	for _, v := range c.Before {
		if v == noValue {
			v = "true"
		}
		if _, err := run(ctx, s.commonDir, "config", "--file", file, "--add", c.Key, v); err != nil {
			return err
		}
	}
	if len(c.Before) > 0 {
		return nil
	}
	// git leaves the header of a section it unset the last key of
	// ("[alias]"): a section the addition brought goes with it.
	section := c.Key[:strings.LastIndex(c.Key, ".")]
	out, err := run(ctx, s.commonDir, "config", "--file", file, "--list", "-z")
	if err != nil {
		return err
	}
	for _, e := range strings.Split(out, "\x00") {
		key, _, _ := strings.Cut(e, "\n")
		if strings.HasPrefix(key, section+".") && !strings.Contains(key[len(section)+1:], ".") {
			return nil // the section holds other keys
		}
	}
	if _, err := run(ctx, s.commonDir, "config", "--file", file, "--remove-section", section); err != nil && exitCode(err) != 128 {
		return err // 128: no such section
	}
	return nil
}

// runsPrograms reports whether a configuration key, as `git config
// --list` names it, makes git run a program or read another file, which
// could hold such a key: the keys of git-config(1) that name a command,
// a hooks directory or an included file, every alias (one that does not
// start with "!" may still pass -c options to git), and
// extensions.worktreeConfig, which turns the worktrees' config.worktree
// files on.
func runsPrograms(key string) bool {
	section, rest, _ := strings.Cut(key, ".")
	sub, name := "", rest
	if i := strings.LastIndex(rest, "."); i >= 0 {
		sub, name = rest[:i], rest[i+1:]
	}
	switch section {
	case "alias", "include", "includeif", "filter", "pager":
		return true
	case "core":
		return slices.Contains([]string{"hookspath", "fsmonitor", "sshcommand", "editor", "pager", "askpass", "gitproxy", "alternaterefscommand"}, name)
	case "diff":
		return name == "textconv" || name == "command" || (sub == "" && name == "external")
	case "merge":
		return sub != "" && name == "driver"
	case "sequence":
		return name == "editor"
	case "gpg":
		return name == "program" || name == "defaultkeycommand"
	case "credential":
		return name == "helper"
	case "uploadpack":
		return name == "packobjectshook"
	case "extensions":
		return name == "worktreeconfig"
	case "remote":
		return name == "uploadpack" || name == "receivepack" || name == "vcs"
	case "difftool", "mergetool", "browser":
		return name == "cmd" || name == "path"
	case "submodule":
		return name == "update"
	case "sendemail":
		return name == "smtpserver"
	case "web":
		return name == "browser"
	}
	return false
}

// Where is the file change c is in, relative to the repository's top and
// slash-separated: the hook, or the configuration file that holds the
// key (".git/config").
func (s *ExecSnapshot) Where(c ExecChange) string {
	if c.Hook != "" {
		return c.Hook
	}
	return s.rel(filepath.Join(s.commonDir, filepath.FromSlash(c.File)))
}
