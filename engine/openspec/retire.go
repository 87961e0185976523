package openspec

import (
	"strings"
)

// A capability is retired (its living spec deleted) only when a change's
// REMOVED entries take its last requirement, the change declares
// `retire_capabilities: true` in its .openspec.yaml, and deleting the file
// loses nothing but its title, Purpose and requirements: the rules of
// `openspec archive` 1.13.2, reproduced here.

var (
	reSubsection      = js(`^ {0,3}##` + reS + `+(` + reDot + `+?)` + reS + `*$`)
	rePurposeTitle    = js(`^` + ci("purpose") + `$`)
	reSetextUnderline = js(`^ {0,3}(=+|-+)` + reS + `*$`)
	reHTMLHeading     = js(`^ {0,3}<` + ci("h") + `[1-6]\b`)
	reHTMLHeadingAny  = js(`^` + reS + `*<` + ci("h") + `[1-6]\b`)
	reTitleHeading    = js(`^ {0,3}#` + reS + `+` + reDot + `+$`)
	reForeignHeading  = js(`^ {0,3}#{1,3}(?:[ \t]|$)`)
	reAnyATXHeading   = js(`^ {0,3}#{1,6}(?:[ \t]|$)`)
	reInterrupts      = js(`^ {0,3}(?:>|(?:[-*_][ \t]*){3,}$|(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)|[<|])`)
	reListItem        = js(`^(` + reS + `*(?:[-*+]|\d{1,9}[.)])` + reS + `+)`)
	reIndent          = js(`^[ \t]*`)
	reScenarioHeading = js(`^ {0,3}####` + reS + `+` + ci("Scenario:"))
	reTableOrHTML     = js(`^` + reS + `*[|<]`)
)

// foreignTail returns the first heading of level 1-3 (outside code fences)
// after a requirement block's own header, "" when there is none: a note the
// block swallowed.
func foreignTail(raw string) string {
	lines := strings.Split(normalizeEOL(raw), "\n")
	mask := fenceMask(lines)
	for i := 1; i < len(lines); i++ {
		if !mask[i] && reForeignHeading.MatchString(lines[i]) {
			return jsTrim(lines[i])
		}
	}
	return ""
}

// column is the width of a line's leading white space, a tab advancing to
// the next multiple of 4.
func column(prefix string) int {
	c := 0
	for _, r := range prefix {
		if r == '\t' {
			c += 4 - c%4
		} else {
			c++
		}
	}
	return c
}

// dropIndent removes up to cols columns of leading spaces and tabs.
func dropIndent(line string, cols int) string {
	c, i := 0, 0
	for i < len(line) && c < cols {
		switch line[i] {
		case ' ':
			c++
		case '\t':
			c += 4 - c%4
		default:
			return line[i:]
		}
		i++
	}
	return line[i:]
}

func isHeadingLine(line string) bool {
	return reAnyATXHeading.MatchString(line) || reHTMLHeadingAny.MatchString(line)
}

// unaccountedContent returns the non-blank lines of a living spec that are
// not its title, its "## Purpose" section, its "## Requirements" heading, or
// a requirement block's header, statement and scenarios (with their
// bullets): content that deleting the spec would lose unmentioned.
func unaccountedContent(p livingParts) []string {
	left := unaccountedBefore(p.before)
	for _, slice := range []string{p.preamble, p.after} {
		for _, l := range strings.Split(slice, "\n") {
			if t := jsTrim(l); t != "" {
				left = append(left, t)
			}
		}
	}
	for _, b := range p.blocks {
		left = append(left, unaccountedInBlock(b.Raw)...)
	}
	return left
}

// unaccountedBefore returns the non-blank lines of the part of a living
// spec before its "## Requirements" heading that are neither its title nor
// its "## Purpose" section.
func unaccountedBefore(part string) []string {
	var left []string
	add := func(s string) { left = append(left, s) }
	before := strings.Split(normalizeEOL(stripBOM(part)), "\n")
	mask := fenceMask(before)
	inPurpose, titleSeen, prev := false, false, ""
	for i, l := range before {
		if jsTrim(l) == "" {
			prev = ""
			continue
		}
		if !mask[i] {
			if m := reSubsection.FindStringSubmatch(l); m != nil {
				inPurpose = rePurposeTitle.MatchString(jsTrim(m[1]))
				if !inPurpose {
					add(jsTrim(l))
				}
				prev = l
				continue
			}
			setext := inPurpose && jsTrim(prev) != "" && reSetextUnderline.MatchString(l)
			if setext || reHTMLHeading.MatchString(l) {
				if setext {
					add(jsTrim(prev))
				} else {
					add(jsTrim(l))
				}
				inPurpose = false
				prev = l
				continue
			}
			if reTitleHeading.MatchString(l) {
				if !titleSeen && !inPurpose {
					titleSeen = true
				} else {
					add(jsTrim(l))
					inPurpose = false
				}
				prev = l
				continue
			}
		}
		prev = l
		if !inPurpose {
			add(jsTrim(l))
		}
	}
	return left
}

// unaccountedInBlock returns what a requirement block holds besides its
// header, statement and scenarios (with their bullets): a heading of level
// 1-3 it swallowed first, then its other non-blank lines in order.
func unaccountedInBlock(raw string) []string {
	var left []string
	add := func(s string) { left = append(left, s) }
	if h := foreignTail(raw); h != "" {
		add(h)
	}
	lines := strings.Split(normalizeEOL(raw), "\n")
	mask := fenceMask(lines)
	seenScenario, inBullets, bulletsSeen := false, false, false
	itemIndent := -1 // content column of the open list item; -1: none
	paragraphOpen := false
	for i, l := range lines {
		if jsTrim(l) == "" {
			if bulletsSeen {
				inBullets = false
			}
			itemIndent, paragraphOpen = -1, false
			continue
		}
		if i == 0 {
			continue // the requirement's header
		}
		indent := column(reIndent.FindString(l))
		insideItem := itemIndent >= 0 && indent >= itemIndent
		within := l
		if insideItem {
			within = dropIndent(l, itemIndent)
		}
		lazy := paragraphOpen && inBullets && !reInterrupts.MatchString(within)
		continues := (insideItem || lazy) && !isHeadingLine(within)
		if mask[i] {
			if !insideItem {
				itemIndent = -1
			}
			paragraphOpen = false
			continue
		}
		if i > 1 && reSetextUnderline.MatchString(within) && jsTrim(lines[i-1]) != "" {
			add(jsTrim(lines[i-1]))
			itemIndent, paragraphOpen = -1, false
			continue
		}
		if continues {
			paragraphOpen = !reInterrupts.MatchString(within)
			continue
		}
		bullet := reListItem.FindStringSubmatch(l)
		itemIndent, paragraphOpen = -1, bullet != nil
		if bullet != nil {
			itemIndent = column(bullet[1])
		}
		if reScenarioHeading.MatchString(l) {
			seenScenario, inBullets, bulletsSeen = true, true, false
			continue
		}
		if bullet != nil {
			switch {
			case inBullets:
				bulletsSeen = true
			case seenScenario:
				add(jsTrim(l))
			}
			continue
		}
		if !seenScenario && !reTableOrHTML.MatchString(l) {
			continue // the requirement's statement
		}
		add(jsTrim(l))
	}
	return left
}
