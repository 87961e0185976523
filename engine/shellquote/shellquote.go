// Package shellquote writes the commands set's messages tell a user to
// run, so that pasting one into a POSIX shell runs exactly that command
// whatever the names in it: a file name an agent chose ("x; curl … | sh")
// is one word, never code.
package shellquote

import "strings"

// Word is s as one word of a POSIX shell command line: as it is when the
// shell reads it so, single-quoted otherwise.
func Word(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/+-=:@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Words is each of names as a Word, space-separated.
func Words(names []string) string {
	words := make([]string, len(names))
	for i, n := range names {
		words[i] = Word(n)
	}
	return strings.Join(words, " ")
}
