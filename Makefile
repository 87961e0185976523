# The README's two commands: `make demo` and `make test`.
GO ?= go
BIN := bin/setctl
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || echo $(shell $(GO) env GOPATH)/bin/staticcheck)

.PHONY: build test lint demo bench fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/setctl

# test runs the whole suite with the race detector, then the static checks.
test:
	$(GO) test -race -count=1 ./...
	$(MAKE) lint

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) mod tidy -diff

# demo runs the bundled example end to end in a temporary git repository:
# setctl apply with the replay agent, from spec to merged, tested main.
demo: build
	@bash scripts/demo.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
