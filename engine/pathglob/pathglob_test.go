package pathglob

import (
	"slices"
	"testing"
)

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
		if got := Match(tt.pattern, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
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
		if got := InScope(tt.scope, tt.name); got != tt.want {
			t.Errorf("InScope(%q, %q) = %v, want %v", tt.scope, tt.name, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"CHANGELOG.md", "docs/**", "**/*_test.go", "./a/[ab].go", "internal/routes.go"} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", " ", "/etc/x", "../x", "a/../b", "docs/[a.md", `a\`} {
		if err := Check(bad); err == nil {
			t.Errorf("Check(%q) = nil, want an error", bad)
		}
	}
}

// Overlap answers whether a change whose scope holds the entry may touch
// a file the pattern names.
func TestOverlap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scope, pattern string
		want           bool
	}{
		{"internal/routes.go", "internal/routes.go", true},
		{"internal/**", "internal/routes.go", true},
		{"internal", "internal/routes.go", true},
		{"internal/", "internal/routes.go", true},
		{"internal/links/**", "internal/routes.go", false},
		{"internal/*.go", "internal/routes.go", true},
		{"internal/*.md", "internal/routes.go", false},
		{"**", "schema.sql", true},
		{"internal/routes.go", "**/routes.go", true},
		{"internal/routes.go", "internal/*.go", true},
		{"cmd/**", "**/routes.go", true},
		{"*.go", "*.md", false},
		{"a*", "*b", true},
		{"api/v1/*.go", "api/**/routes.go", true},
		{"api/v1/*.go", "web/**", false},
		{"routes.go", "internal/routes.go", false},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := Overlap(tt.scope, tt.pattern); got != tt.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v", tt.scope, tt.pattern, got, tt.want)
		}
	}
}

// Touching is the patterns a scope may touch a file of, in their order;
// every one for a change without a scope.
func TestTouching(t *testing.T) {
	patterns := []string{"internal/routes.go", "docs/**", "README.md"}
	for _, tt := range []struct {
		scope []string
		want  []string
	}{
		{nil, patterns},
		{[]string{"internal/**"}, []string{"internal/routes.go"}},
		{[]string{"docs/usage.md", "README.md"}, []string{"docs/**", "README.md"}},
		{[]string{"cmd/app/main.go"}, nil},
	} {
		if got := Touching(tt.scope, patterns); !slices.Equal(got, tt.want) {
			t.Errorf("Touching(%v) = %v, want %v", tt.scope, got, tt.want)
		}
	}
}
