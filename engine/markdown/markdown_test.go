package markdown

import "testing"

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":  "plain text",
		"a|b":         `a\|b`,
		"*x* _y_ `z`": "\\*x\\* \\_y\\_ \\`z\\`",
		"[l](u) <b>":  `\[l\](u) \<b\>`,
		"# h ~s~ \\":  `\# h \~s\~ \\`,
		"two\nlines":  "two lines",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCode(t *testing.T) {
	if code := Code("a`b"); code != "``a`b``" {
		t.Errorf("Code(a`b) = %s", code)
	}
	if code := Code("`a"); code != "`` `a ``" {
		t.Errorf("Code(`a) = %s", code)
	}
	if code := Code("two\nlines"); code != "`two lines`" {
		t.Errorf("Code(two\\nlines) = %s", code)
	}
}
