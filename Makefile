# The README's two commands: `make demo` and `make test`.
GO ?= go
BIN := bin/setctl
# staticcheck, at the one pinned version of the repository: built on the
# first `make lint` into bin/tools (go install fetches it through the Go
# module proxy; nothing is added to go.mod), then used from there offline.
# The Go version is part of the name because staticcheck must be built by a
# Go at least as new as the code it checks. GOFLAGS is cleared so that a
# -mod flag meant for this module does not reach the tool's build.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/tools/staticcheck-$(STATICCHECK_VERSION)-$(shell $(GO) env GOVERSION)

# The OpenSpec CLI, at the one version whose `openspec archive` set's
# archive reproduces (openspec.OpenSpecVersion): installed from npm into
# bin/tools/openspec by `make openspec`, for the tests that compare set with
# it (internal/clitest.OpenSpec): the differential archive tests of
# engine/openspec (TestArchiveDiff), and cmd/setctl's TestOpenSpecAdopt, which
# applies folders written with it and archives them with it to compare. They
# skip without it, and fail under CI=true. It needs Node.js >= 20.19 (the
# package's engines field).
OPENSPEC_VERSION := 1.13.2
OPENSPEC_STAMP := bin/tools/openspec/.installed-$(OPENSPEC_VERSION)
NODE_CHECK := node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'

# The cue command, at the version of cuelang.org/go that setctl is built
# with: `make cue` installs it into bin/tools (go install, as for
# staticcheck), for `make cue-publish` and for the tests that evaluate
# set.cue files with the real cue command (internal/clitest.CUE).
CUE_VERSION := v0.17.1
CUE := bin/tools/cue-$(CUE_VERSION)

.PHONY: build test lint demo bench fuzz clean openspec cue cue-publish

build:
	$(GO) build -o $(BIN) ./cmd/setctl

# test runs the whole suite with the race detector, then the static checks.
# cmd/setctl's package, with the profiles' sample projects, the kill
# campaign and the real CLIs, takes several minutes on two cores: the
# timeout of one package is 20 minutes rather than go test's 10.
test:
	$(GO) test -race -count=1 -timeout 20m ./...
	$(MAKE) lint

lint: $(STATICCHECK)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) mod tidy -diff

$(STATICCHECK):
	@mkdir -p $(@D)
	tmp=$$(mktemp -d $(@D)/.install.XXXXXX); \
	GOFLAGS= GOBIN=$(CURDIR)/$$tmp $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) && \
	mv $$tmp/staticcheck $@; status=$$?; rm -rf $$tmp; exit $$status

# demo runs the bundled example end to end in a temporary git repository:
# setctl apply with the replay agent, from spec to merged, tested main.
demo: build
	@bash scripts/demo.sh

openspec: $(OPENSPEC_STAMP)

$(OPENSPEC_STAMP):
	@$(NODE_CHECK) 2>/dev/null || { echo "make openspec: the OpenSpec CLI $(OPENSPEC_VERSION) needs Node.js >= 20.19 and npm; node here: $$(node --version 2>/dev/null || echo none). Install Node.js 20.19 or newer (https://nodejs.org), then rerun." >&2; exit 1; }
	npm install --prefix bin/tools/openspec @fission-ai/openspec@$(OPENSPEC_VERSION) --no-audit --no-fund
	@touch $@

cue: $(CUE)

$(CUE):
	@mkdir -p $(@D)
	tmp=$$(mktemp -d $(@D)/.install.XXXXXX); \
	GOFLAGS= GOBIN=$(CURDIR)/$$tmp $(GO) install cuelang.org/go/cmd/cue@$(CUE_VERSION) && \
	mv $$tmp/cue $@; status=$$?; rm -rf $$tmp; exit $$status

# cue-publish publishes set's CUE module to $$CUE_REGISTRY at the version
# the binary serves it at (set.ModuleVersion): exactly the files setctl
# embeds, written into a temporary directory by scripts/cuemodule, so that
# the cue command evaluates a project's set.cue against the bytes setctl
# checks it against.
cue-publish: $(CUE)
	@test -n "$$CUE_REGISTRY" || { echo "make cue-publish: set CUE_REGISTRY to the registry to publish to (e.g. CUE_REGISTRY=registry.example.com/cue)" >&2; exit 1; }
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	version=$$($(GO) run ./scripts/cuemodule "$$dir/set") && \
	cd "$$dir/set" && $(abspath $(CUE)) mod publish "$$version"

# bench runs BenchmarkApply (issue 16's scenarios: generated DAGs of 50 and
# 200 changes, 20 independent changes) once each and prints the table of
# wall time against the lower bound, overhead, CPU, git processes and
# memory per change. The other benchmarks run with `go test -bench`.
bench:
	GO=$(GO) bash scripts/bench.sh

clean:
	rm -rf bin
