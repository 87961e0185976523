package openspec

import (
	"strings"
	"testing"
	"time"
)

func TestDecodeUTF8LikeNode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain ascii", "plain ascii"},
		{"\ufeffkeeps the BOM", "\ufeffkeeps the BOM"},
		{"a\xffb", "a\ufffdb"},
		// A truncated 3-byte sequence is one maximal subpart: one U+FFFD.
		{"a\xe2\x82b", "a\ufffdb"},
		{"\xe2\x82\xac", "€"},
		// A surrogate encoded in UTF-8 is ill-formed byte by byte.
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
		{"\xf0\x9f\x98", "\ufffd"},
		{"\xc0\xaf", "\ufffd\ufffd"},
	}
	for _, tt := range tests {
		if got := decodeUTF8([]byte(tt.in)); got != tt.want {
			t.Errorf("decodeUTF8(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestJSWhiteSpace(t *testing.T) {
	// JavaScript trims U+FEFF and not U+0085; Go's unicode.IsSpace does the
	// opposite.
	if got := jsTrim("\ufeff\u00a0 x\u2028\t"); got != "x" {
		t.Errorf("jsTrim = %q", got)
	}
	if got := jsTrim("\u0085x"); got != "\u0085x" {
		t.Errorf("jsTrim trimmed U+0085: %q", got)
	}
	if got := jsLower("İD"); got != "i\u0307d" {
		t.Errorf("jsLower(İD) = %q", got)
	}
	if !reRequirementHeader.MatchString("###\u00a0REQUIREMENT:x") {
		t.Error("the requirement header does not accept a no-break space and upper case")
	}
	// The i flag of a JavaScript regexp does not fold the long s (U+017F)
	// into an ASCII s; Go's (?i) would.
	if reRequirementsHeading.MatchString("## Requirement\u017f") {
		t.Error("the Requirements heading folds a non-ASCII letter")
	}
	if !reRequirementsHeading.MatchString("##\tREQUIREMENTS \u3000") {
		t.Error("the Requirements heading does not accept upper case and JavaScript white space")
	}
}

func TestFenceMask(t *testing.T) {
	lines := strings.Split("a\n  ```go\n## in\n```` \nb\n~~~\n```\n~~~~\nc\n```\nopen", "\n")
	want := "-+++-+++-++"
	var got strings.Builder
	for _, m := range fenceMask(lines) {
		if m {
			got.WriteByte('+')
		} else {
			got.WriteByte('-')
		}
	}
	if got.String() != want {
		t.Errorf("fenceMask = %s, want %s", got.String(), want)
	}
}

func TestNormalizeRequirementName(t *testing.T) {
	for in, want := range map[string]string{
		"Login ##":  "Login",
		"Login##":   "Login##",
		"C#":        "C#",
		"A ## B ##": "A ## B",
		"Foo ## ##": "Foo ##",
		" Padded ":  "Padded",
	} {
		if got := normalizeRequirementName(in); got != want {
			t.Errorf("normalizeRequirementName(%q) = %q, want %q", in, got, want)
		}
	}
	if foldRequirementName("Log  In") != foldRequirementName("log in") {
		t.Error("fold keeps case or spacing")
	}
}

func TestArchiveName(t *testing.T) {
	day := time.Date(2026, 3, 4, 23, 59, 0, 0, time.UTC)
	for change, want := range map[string]string{
		"add-mfa":            "2026-03-04-add-mfa",
		"2025-01-15-add-mfa": "2025-01-15-add-mfa",
		"2025-1-15-add-mfa":  "2026-03-04-2025-1-15-add-mfa",
		"20250115-add-mfa":   "2026-03-04-20250115-add-mfa",
	} {
		if got := ArchiveName(change, day); got != want {
			t.Errorf("ArchiveName(%q) = %q, want %q", change, got, want)
		}
	}
}
