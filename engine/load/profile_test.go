package load

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"cuelang.org/go/mod/modregistrytest"
)

// profileModule is a team's profile module at one version: a gotools
// package built on the embedded golang profile.
func profileModule(version string) fstest.MapFS {
	dir := "example.com_acme_profiles_" + version + "/"
	return fstest.MapFS{
		dir + "cue.mod/module.cue": {Data: []byte(`module: "example.com/acme/profiles@v0"
language: version: "v0.17.0"
deps: "github.com/set-engine/set@v0": v: "v0.1.0"
deps: "example.com/acme/base@v0": v: "v0.1.0"
`)},
		dir + "gotools/gotools.cue": {Data: []byte(`package gotools

import "github.com/set-engine/set/profiles/golang"

#Project: golang.#Project & {maxParallel: *2 | int}
`)},
	}
}

func TestResolveProfile(t *testing.T) {
	fsys := fstest.MapFS{}
	for _, v := range []string{"v0.1.0", "v0.2.0", "v0.3.0-rc.1"} {
		for name, f := range profileModule(v) {
			fsys[name] = f
		}
	}
	reg, err := modregistrytest.New(fsys, "")
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	opts := Options{Env: []string{"CUE_CACHE_DIR=" + t.TempDir(), "CUE_REGISTRY=" + reg.Host() + "+insecure"}}
	ctx := context.Background()

	for _, tt := range []struct {
		ref                         string
		importPath, module, version string
	}{
		{"example.com/acme/profiles/gotools", "example.com/acme/profiles/gotools@v0", "example.com/acme/profiles@v0", "v0.2.0"},
		{"example.com/acme/profiles/gotools@v0", "example.com/acme/profiles/gotools@v0", "example.com/acme/profiles@v0", "v0.2.0"},
		{"example.com/acme/profiles/gotools@v0.1.0", "example.com/acme/profiles/gotools@v0", "example.com/acme/profiles@v0", "v0.1.0"},
		{"example.com/acme/profiles/gotools@v0.3.0-rc.1", "example.com/acme/profiles/gotools@v0", "example.com/acme/profiles@v0", "v0.3.0-rc.1"},
		{"example.com/acme/profiles/gotools:gotools", "example.com/acme/profiles/gotools@v0:gotools", "example.com/acme/profiles@v0", "v0.2.0"},
	} {
		p, err := ResolveProfile(ctx, tt.ref, opts)
		if err != nil {
			t.Errorf("ResolveProfile(%q): %v", tt.ref, err)
			continue
		}
		if p.ImportPath != tt.importPath || p.Package != "gotools" || p.Module != tt.module || p.Version != tt.version {
			t.Errorf("ResolveProfile(%q) = %+v", tt.ref, p)
		}
		if len(p.Requires) != 2 || p.Requires["example.com/acme/base@v0"] != "v0.1.0" || p.Requires["github.com/set-engine/set@v0"] != "v0.1.0" {
			t.Errorf("ResolveProfile(%q).Requires = %v", tt.ref, p.Requires)
		}
	}

	p, err := ResolveProfile(ctx, "golang", opts)
	if err != nil || p.ImportPath != "github.com/set-engine/set/profiles/golang" || p.Package != "golang" || p.Module != "" || len(p.Requires) != 0 {
		t.Errorf("ResolveProfile(golang) = %+v, %v", p, err)
	}

	for _, tt := range []struct{ ref, err string }{
		{"cobol", `unknown profile "cobol" (built-in: golang, node, python, rust, web; or a package path`},
		{"example.com/acme/profiles/rust", `no module in ` + reg.Host() + `+insecure provides package example.com/acme/profiles/rust at any version of major version v0`},
		{"example.com/acme/profiles/gotools@v0.9.9", `provides package example.com/acme/profiles/gotools at version v0.9.9`},
		{"example.com/acme/profiles/gotools@v1", `at any version of major version v1`},
		{"example.com/acme/profiles/gotools@latest", `"latest" is neither a major version (v0) nor a full version (v0.1.2)`},
		{"example.com/acme/go-tools", `"go-tools" is not a valid package name; name the package after a colon (example.com/acme/go-tools:mypkg)`},
	} {
		_, err := ResolveProfile(ctx, tt.ref, opts)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ResolveProfile(%q) = %v, want an error containing %q", tt.ref, err, tt.err)
		}
	}

	// Without a registry, a registry profile cannot be found.
	_, err = ResolveProfile(ctx, "example.com/acme/profiles/gotools", Options{Env: []string{"CUE_CACHE_DIR=" + t.TempDir(), "CUE_REGISTRY=none"}})
	if err == nil || !strings.Contains(err.Error(), `CUE_REGISTRY is none, so no registry can provide package example.com/acme/profiles/gotools; set CUE_REGISTRY to the registry that holds it`) {
		t.Errorf("ResolveProfile with CUE_REGISTRY=none = %v", err)
	}
}
