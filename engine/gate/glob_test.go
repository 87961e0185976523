package gate

import "testing"

func TestMatchGlob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, name string
		want          bool
	}{
		// Literal paths.
		{"go.mod", "go.mod", true},
		{"go.mod", "sub/go.mod", false},
		{"a/b.go", "a/b.go", true},
		{"a/b.go", "a/b.go/c", false},
		{"./a/b.go", "a/b.go", true},
		// "*" stays within one segment.
		{"*.go", "main.go", true},
		{"*.go", "cmd/main.go", false},
		{"cmd/*", "cmd/main.go", true},
		{"cmd/*", "cmd/set/main.go", false},
		{"cmd/*/main.go", "cmd/set/main.go", true},
		{"*_test.go", "a_test.go", true},
		{"a*b", "a/b", false},
		// "**" spans zero or more segments.
		{"**/*_test.go", "a_test.go", true},
		{"**/*_test.go", "x/a_test.go", true},
		{"**/*_test.go", "x/y/z/a_test.go", true},
		{"**/*_test.go", "x/y/z/a.go", false},
		{"**/*_test.go", "x/a_test.go/b", false},
		{"docs/**", "docs/a.md", true},
		{"docs/**", "docs/x/y/a.md", true},
		{"docs/**", "docs", true},
		{"docs/**", "documents/a.md", false},
		{"docs/**", "x/docs/a.md", false},
		{"internal/**/store/*.go", "internal/store/db.go", true},
		{"internal/**/store/*.go", "internal/a/b/store/db.go", true},
		{"internal/**/store/*.go", "internal/a/b/store/x/db.go", false},
		{"**", "anything/at/all", true},
		{"**/**/a", "a", true},
		{"**/**/a", "x/y/a", true},
		{"a/**/b/**/c", "a/b/c", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/c", false},
		// Other path.Match syntax.
		{"file?.txt", "file1.txt", true},
		{"file?.txt", "file10.txt", false},
		{"[ab].go", "b.go", true},
		{"[ab].go", "c.go", false},
		// Degenerate input.
		{"", "a", false},
		{"a", "", false},
		{"[", "[", false},
	}
	for _, tt := range tests {
		if got := matchGlob(tt.pattern, tt.name); got != tt.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestInScope(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scope []string
		name  string
		want  bool
	}{
		{[]string{"internal/auth/**"}, "internal/auth/login.go", true},
		{[]string{"internal/auth"}, "internal/auth/x/login.go", true},
		{[]string{"internal/auth/"}, "internal/auth/login.go", true},
		{[]string{"internal/auth"}, "internal/authz/login.go", false},
		{[]string{"internal/auth"}, "internal/auth", true},
		{[]string{"cmd/*.go"}, "cmd/x/main.go", false},
		{[]string{"a/**", "b/*.go"}, "b/x.go", true},
		{nil, "a.go", false},
	}
	for _, tt := range tests {
		if got := inScope(tt.scope, tt.name); got != tt.want {
			t.Errorf("inScope(%q, %q) = %v, want %v", tt.scope, tt.name, got, tt.want)
		}
	}
}
