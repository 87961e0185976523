package git

import (
	"context"
	"strings"
)

// CommitsChanging returns the commits of the first-parent history from
// since (excluded) to rev that changed path, newest first, with their
// messages: on main, whose history is linear, the work that reached it
// after since and touched path.
func CommitsChanging(ctx context.Context, dir, since, rev, path string) ([]Commit, error) {
	out, err := run(ctx, dir, "log", "--first-parent", "-z", "--format=%H%n%B", since+".."+rev, "--", path)
	if err != nil {
		return nil, err
	}
	return parseLog(out), nil
}

// parseLog reads the output of git log -z --format=%H%n%B.
func parseLog(out string) []Commit {
	var commits []Commit
	for _, entry := range strings.Split(out, "\x00") {
		id, msg, ok := strings.Cut(strings.TrimLeft(entry, "\n"), "\n")
		if !ok || id == "" {
			continue
		}
		commits = append(commits, Commit{ID: id, Message: msg})
	}
	return commits
}
