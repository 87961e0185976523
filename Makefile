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

.PHONY: build test lint demo bench fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/setctl

# test runs the whole suite with the race detector, then the static checks.
test:
	$(GO) test -race -count=1 ./...
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

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
