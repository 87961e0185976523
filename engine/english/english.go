// Package english words counts and lists the way set's messages say them:
// "1 change", "2 retries", "a, b and c". Every message that counts or
// lists goes through it, so no message says "1 changes".
package english

import (
	"fmt"
	"slices"
	"strings"
)

// Plural is n followed by noun, in the plural unless n is 1: "1 change",
// "2 changes", "2 retries", "3 matches". noun is a regular English noun in
// the singular; a noun phrase ("gate run") is pluralised on its last word.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %s", n, pluralOf(noun))
}

// pluralOf is the plural of a regular noun: -y after a consonant becomes
// -ies, -s, -x, -z, -ch and -sh take -es, everything else takes -s.
func pluralOf(noun string) string {
	switch {
	case strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "z"),
		strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		return noun + "es"
	}
	return noun + "s"
}

// List joins items as a sentence does: "a", "a and b", "a, b and c"; ""
// for none.
func List(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// Cut keeps the first n items and, when there are more, adds "and K
// more" for the rest: a list a message can print whole.
func Cut(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(slices.Clip(items[:n]), fmt.Sprintf("and %d more", len(items)-n))
}

// Tokens is a count of tokens, short: "950", "12.3k", "2.1M".
func Tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Closest is the candidate nearest to name, for a "did you mean" in an
// error: the one fewest edits away (see editDistance), within two edits
// (ties go to the earlier candidate); "" when none is that near.
func Closest(name string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b, in
// bytes: insertions, deletions, substitutions and swaps of two adjacent
// bytes count one edit each ("tset" is one edit from "test").
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
