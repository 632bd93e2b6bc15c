# hosteval: the two commands of the README are `make run` and `make test`.
# Everything they need is installed here: Go modules through the Go module
# proxy (go.mod pins them), and the pinned npm packages of tools/node
# (third-party MCP servers, the conformance suite and its Node 22) into
# tools/node/node_modules, never globally.

SHELL   := bash
GO      ?= go
BIN     := bin
NODE_DIR := tools/node
NODE_STAMP := $(NODE_DIR)/node_modules/.npm-ci-done
# make test must finish well within CI's limit on 2 cores.
TEST_TIMEOUT ?= 15m

.PHONY: all build run test vet conformance node-deps bench fuzz clean browser-deps view

all: build

## build: every binary (the CLI and the fixture servers) into bin/
build:
	$(GO) build -o $(BIN)/ ./cmd/hosteval ./servers/cmdb ./servers/tickets ./servers/support ./servers/legacy ./servers/chaos

## node-deps: the pinned npm packages, installed from the lock file
node-deps: $(NODE_STAMP)
$(NODE_STAMP): $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json
	npm ci --prefix $(NODE_DIR) --no-audit --no-fund --loglevel=error
	touch $@

## run: build everything and run the default suite with scripted models
run: build node-deps
	./$(BIN)/hosteval run scenarios/

## test: vet, the race-enabled tests (fixture servers, third-party servers
## over stdio, end-to-end CLI scripts, the pages in headless Chromium; their
## screenshots go to artifacts/) and the conformance suite
test: build node-deps browser-deps vet
	HOSTEVAL_ARTIFACTS=$(CURDIR)/artifacts $(GO) test -race -timeout $(TEST_TIMEOUT) ./...
	$(MAKE) conformance

vet:
	$(GO) vet ./...

## browser-deps: Debian's chromium, for the browser tests, when it is missing
browser-deps:
	@echo "==> browser-deps: chromium for the browser tests"
	@command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

## view: the pages over results/ on 127.0.0.1 (hosteval view)
view: build
	./$(BIN)/hosteval view results/

## conformance: the official MCP conformance suite against hosteval's host
## (hosteval conformance-client): every client scenario required for
## 2026-07-28, then the core suite, offline; fails on a regression and on a
## baseline entry (tools/conformance/expected-failures.yaml) that now passes
conformance: build node-deps
	tools/conformance/run.sh $(BIN)/hosteval

## bench: the Go benchmarks (speed and memory targets)
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...

## fuzz: every Go fuzz target (the scenario loader, scripted calls, ...)
## for FUZZTIME each; not part of make test, which runs their seed corpora
FUZZTIME ?= 30s
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz: $$target in $$pkg for $(FUZZTIME)"; \
	    $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

clean:
	rm -rf $(BIN) $(NODE_DIR)/node_modules
