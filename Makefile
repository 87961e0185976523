# The README's two commands: `make demo` and `make test`.
GO ?= go
BIN := bin/set
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || echo $(shell $(GO) env GOPATH)/bin/staticcheck)

.PHONY: build test lint demo bench fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/set

# test runs the whole suite with the race detector, then the static checks.
test:
	$(GO) test -race -count=1 ./...
	$(MAKE) lint

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) mod tidy -diff

# demo plans the bundled example project and shows its execution graph.
demo: build
	@echo "== set vet (examples/linkshort)"
	./$(BIN) -C examples/linkshort vet
	@echo
	@echo "== set plan (examples/linkshort)"
	./$(BIN) -C examples/linkshort plan

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
