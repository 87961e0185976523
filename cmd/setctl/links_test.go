package main

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// markdownLink is an inline link or image of markdown: [text](target),
// the target up to a space (a title) or the closing parenthesis.
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestDocsLinks: every link of README.md, of the pages of docs/ and of the
// examples' READMEs stays in the repository or goes to a public site: a
// relative link names a file or directory of the repository (never one
// beyond its root), and its #anchor, on a markdown page, a heading of that
// page; an absolute one is https to a host that is not loopback.
func TestDocsLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	pages := []string{"README.md"}
	for _, pattern := range []string{"docs/*.md", "examples/*/README.md"} {
		names, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			rel, err := filepath.Rel(root, n)
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, filepath.ToSlash(rel))
		}
	}
	if len(pages) < 10 {
		t.Fatalf("found only %d pages: %v", len(pages), pages)
	}
	anchors := map[string]map[string]bool{} // page → its headings' anchors
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		anchors[page] = headingAnchors(string(data))
		return anchors[page]
	}
	links := 0
	for _, page := range pages {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range proseLines(string(data)) {
			for _, m := range markdownLink.FindAllStringSubmatch(line, -1) {
				links++
				if problem := checkLink(root, page, m[1], anchorsOf); problem != "" {
					t.Errorf("%s:%d: link %s: %s", page, i+1, m[1], problem)
				}
			}
		}
	}
	if links < 20 {
		t.Errorf("found only %d links: the pattern no longer matches", links)
	}
}

// checkLink says what is wrong with the link target of page, or "".
func checkLink(root, page, target string, anchorsOf func(page string) map[string]bool) string {
	u, err := url.Parse(target)
	if err != nil {
		return err.Error()
	}
	if u.Scheme != "" || u.Host != "" {
		host := u.Hostname()
		switch {
		case u.Scheme != "https":
			return "an absolute link must be https to a public site"
		case host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1" || !strings.Contains(host, "."):
			return "the host is not a public site"
		}
		return ""
	}
	file := page
	if u.Path != "" {
		file = path.Join(path.Dir(page), u.Path)
		if file == ".." || strings.HasPrefix(file, "../") || path.IsAbs(u.Path) {
			return "it leaves the repository"
		}
		info, err := os.Stat(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return "no such file in the repository"
		}
		if info.IsDir() {
			file = ""
		}
	}
	if u.Fragment != "" {
		if !strings.HasSuffix(file, ".md") {
			return "an anchor on a page that is not markdown"
		}
		if !anchorsOf(file)[u.Fragment] {
			return "no heading of " + file + " has the anchor #" + u.Fragment
		}
	}
	return ""
}

// proseLines are the lines of a markdown page, with those of fenced code
// blocks and the spans in backquotes blanked, so that a link is only
// found where markdown renders one. Line i of the result is line i+1 of
// the page.
func proseLines(page string) []string {
	lines := strings.Split(page, "\n")
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
			continue
		}
		lines[i] = codeSpan.ReplaceAllString(line, "``")
	}
	return lines
}

var codeSpan = regexp.MustCompile("`[^`]*`")

// headingAnchors are the anchors GitHub gives the headings of a markdown
// page: the heading's text in lower case, without what is neither a
// letter, a digit, a space, a hyphen nor an underscore, spaces as
// hyphens; a repeated anchor gets -1, -2, ….
func headingAnchors(page string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for line := range strings.Lines(page) {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		text := strings.TrimLeft(line, "#")
		if fenced || len(text) == len(line) || !strings.HasPrefix(text, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			seen[anchor]++
			anchor += "-" + strconv.Itoa(n)
		} else {
			seen[anchor] = 1
		}
		anchors[anchor] = true
	}
	return anchors
}

// TestDocsLinkCheck: the link check refuses what leaves the repository or
// names nothing in it, and lets the rest through.
func TestDocsLinkCheck(t *testing.T) {
	root := filepath.Join("..", "..")
	anchorsOf := func(page string) map[string]bool {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		return headingAnchors(string(data))
	}
	for target, ok := range map[string]bool{
		"commands.md#setctl-apply":               true,
		"#the-lifecycle":                         true,
		"../examples/linkshort/README.md#try-it": true,
		"../examples/team-profile/":              true,
		"conditions.md":                          true,
		"gates.md#environment-and-secrets":       true,
		"https://expr-lang.org/docs/language":    true,
		"../../shared/DESIGN.md":                 false,
		"../README.md#what-works-today":          false,
		"spec-loop.md#nope":                      false,
		"missing.md":                             false,
		"/etc/passwd":                            false,
		"http://example.com/":                    false,
		"https://127.0.0.1:7400/":                false,
		"https://localhost/":                     false,
		"../engine/journal/events.go#L15":        false,
		"../engine/journal/events.go":            true,
		"what-setctl-apply-does":                 false,
		"apply.md#what-setctl-apply-does":        true,
		"model-gates.md#gates-a-model-grades-review-and-spec_verify": true,
	} {
		problem := checkLink(root, "docs/architecture.md", target, anchorsOf)
		if (problem == "") != ok {
			t.Errorf("%s: problem %q, want ok = %v", target, problem, ok)
		}
	}
}
