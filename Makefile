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

.PHONY: all build run test vet conformance node-deps bench fuzz cassettes clean

all: build

## build: every binary (the CLI and the fixture servers) into bin/
build:
	$(GO) build -o $(BIN)/ ./cmd/hosteval ./servers/cmdb ./servers/tickets ./servers/support ./servers/legacy ./servers/chaos ./servers/fakeapi

## node-deps: the pinned npm packages, installed from the lock file
node-deps: $(NODE_STAMP)
$(NODE_STAMP): $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json
	npm ci --prefix $(NODE_DIR) --no-audit --no-fund --loglevel=error
	touch $@

## run: build everything and run the default suite with scripted models
run: build node-deps
	./$(BIN)/hosteval run scenarios/

## test: vet, the race-enabled tests (fixture servers, third-party servers
## over stdio, end-to-end CLI scripts) and the conformance suite
test: build node-deps vet
	$(GO) test -race -timeout $(TEST_TIMEOUT) ./...
	$(MAKE) conformance

vet:
	$(GO) vet ./...

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

## cassettes: record the suite's real-model scenarios into scenarios/cassettes
## (make run and make test replay them offline): against the project's test
## endpoint (servers/fakeapi), or against a real one when OPENAI_BASE_URL is
## set (make cassettes OPENAI_BASE_URL=http://host:8000/v1; the key, if any,
## in OPENAI_API_KEY). Review the diff and commit it.
CASSETTE_SCENARIOS := scenarios/real-ab.yaml scenarios/real-gate.yaml
cassettes: build
ifdef OPENAI_BASE_URL
	./$(BIN)/hosteval run -record scenarios/cassettes $(CASSETTE_SCENARIOS)
else
	./$(BIN)/fakeapi -config scenarios/cassettes/fakeapi.yaml -now 2026-01-01T00:00:00Z -- \
	  ./$(BIN)/hosteval run -record scenarios/cassettes $(CASSETTE_SCENARIOS)
endif

clean:
	rm -rf $(BIN) $(NODE_DIR)/node_modules
