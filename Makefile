# hosteval: the two commands of the README are `make run` and `make test`.
# Everything they need is installed here: Go modules through the Go module
# proxy (go.mod pins them), and the pinned npm packages of tools/node
# (third-party MCP servers, the conformance suite and its Node 22) into
# tools/node/node_modules, never globally. Each phase prints one "==>" line,
# so that the long first build (minutes on 2 cores) is never silent.
#
# Shipping: `make release` (static binaries for six platforms and their
# checksums in dist/), `make release-check` (builds them and checks each
# file), `make image` (the container, needs a Docker engine), and the linters
# of the shipping recipes: `make lint-docker lint-ci lint-k8s`.

SHELL   := bash
GO      ?= go
BIN     := bin
DIST    := dist
NODE_DIR := tools/node
NODE_STAMP := $(NODE_DIR)/node_modules/.npm-ci-done
LINT_DIR := tools/lint
LINT_STAMP := $(LINT_DIR)/node_modules/.npm-ci-done
MODULES_STAMP := $(BIN)/.go-mod-download-done
# make test must finish well within CI's limit on 2 cores.
TEST_TIMEOUT ?= 15m
# The formatter make test reads go test -json through (standard library
# only): one line per package as it finishes, then the slowest.
TESTPROGRESS := $(BIN)/testprogress
# Each phase's "==>" line says how long make has run: the clock starts
# when make reads this file, and a sub-make is handed the same start.
ifndef MAKE_START
MAKE_START := $(shell date +%s)
endif
export MAKE_START
PHASE = t=$$(( $$(date +%s) - $(MAKE_START) )); printf '==> [%dm%02ds] %s\n' $$((t / 60)) $$((t % 60))

# What the binaries say of themselves (`hosteval version`): the release tag at
# HEAD if there is one, else a Go pseudo-version of HEAD (+dirty when the tree
# had changes), the commit, and whether the tree had changes. The go command
# stamps the same itself in a plain clone, but not in a git worktree, in a
# tree without .git (the container build) or with -buildvcs=false, so they are
# passed at link time. A release names its version: make release VERSION=v1.2.3
BUILDINFO := github.com/hosteval/hosteval/internal/buildinfo
VERSION  ?= $(shell git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
MODIFIED ?= $(shell s=$$(git status --porcelain 2>/dev/null) && { [[ -z $$s ]] && echo false || echo true; })
VERSION  := $(VERSION)
REVISION := $(REVISION)
MODIFIED := $(MODIFIED)
BUILD_VERSION := $(or $(VERSION),$(if $(REVISION),v0.0.0-$(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S 2>/dev/null)-$(shell git rev-parse --short=12 HEAD 2>/dev/null)$(if $(filter true,$(MODIFIED)),+dirty)))
LDFLAGS  := -X $(BUILDINFO).version=$(BUILD_VERSION) -X $(BUILDINFO).revision=$(REVISION) -X $(BUILDINFO).modified=$(MODIFIED)

RELEASE_VERSION := $(BUILD_VERSION)
# File names drop the leading v, as GoReleaser's do (.goreleaser.yaml).
RELEASE_NAME := hosteval_$(RELEASE_VERSION:v%=%)
RELEASE_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
SHA256SUM := $(shell command -v sha256sum >/dev/null 2>&1 && echo sha256sum || echo shasum -a 256)

FIXTURE_SERVERS := ./servers/cmdb ./servers/tickets ./servers/support ./servers/legacy ./servers/chaos ./servers/poison ./servers/fakeapi
IMAGE ?= hosteval:$(or $(VERSION),dev)

# Tools that run from the Go module proxy, pinned here and never in go.mod.
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT := github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
GORELEASER_VERSION := v2.15.1
GORELEASER := github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

.PHONY: all build run test test-load test-sdk fuzz-short vet conformance node-deps bench bench-endpoint bench-peers clean \
	fuzz browser-deps view cassettes release release-check image lint lint-docker lint-ci lint-k8s goreleaser-check

all: build

# Downloaded once per go.sum; `go build` would do it anyway, silently.
$(MODULES_STAMP): go.mod go.sum
	@$(PHASE) "downloading Go modules (go.mod; once per machine)"
	@$(GO) mod download
	@mkdir -p $(BIN) && touch $@

## build: every binary (the CLI and the fixture servers) into bin/
build: $(MODULES_STAMP)
	@$(PHASE) "building hosteval and the fixture servers into $(BIN)/ (the first build compiles every dependency: minutes)"
	@$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/hosteval $(FIXTURE_SERVERS)

## node-deps: the pinned npm packages, installed from the lock file
node-deps: $(NODE_STAMP)
$(NODE_STAMP): $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json
	@$(PHASE) "installing npm peers ($(NODE_DIR): MCP servers, the conformance suite, Node 22)"
	@npm ci --prefix $(NODE_DIR) --no-audit --no-fund --loglevel=error
	@touch $@

## run: build everything and run the default suite with scripted models
run: build node-deps
	@$(PHASE) "running the suite (scenarios/)"
	./$(BIN)/hosteval run scenarios/

## test: vet, the race-enabled tests with the long ones
## (HOSTEVAL_LONG_TESTS=1: a run of 100,000 records, the third-party
## servers over stdio; with the end-to-end CLI scripts and the pages in
## headless Chromium, whose screenshots go to artifacts/), each package's
## result printed as it finishes, then the load test (the suite and the
## conformance suite on a saturated machine). A plain `go test ./...`
## leaves the long tests out (internal/longtest).
test: build node-deps browser-deps vet $(TESTPROGRESS)
	@$(PHASE) "go test -race ./... with the long tests (HOSTEVAL_LONG_TESTS=1; a line per package as it ends: several minutes)"
	@set -o pipefail; HOSTEVAL_LONG_TESTS=1 HOSTEVAL_ARTIFACTS=$(CURDIR)/artifacts \
		$(GO) test -race -json -timeout $(TEST_TIMEOUT) ./... 2>&1 | $(TESTPROGRESS) -phase 'go test -race ./...'
	@$(MAKE) --no-print-directory test-sdk
	@$(MAKE) --no-print-directory fuzz-short
	@$(MAKE) --no-print-directory test-load
	@$(PHASE) "make test passed"

## test-sdk: the host's and the runner's tests, then the default suite, on
## the go-sdk's code instead of the host's hand-written fast paths
## (HOSTEVAL_TRANSPORT=sdk: docs/perf.md, "Hand-written fast paths")
test-sdk: build node-deps $(TESTPROGRESS)
	@$(PHASE) "the host's and the runner's tests on the go-sdk's code (HOSTEVAL_TRANSPORT=sdk)"
	@set -o pipefail; HOSTEVAL_TRANSPORT=sdk $(GO) test -json -timeout $(TEST_TIMEOUT) ./internal/host/... ./internal/runner/... 2>&1 \
		| $(TESTPROGRESS) -phase 'HOSTEVAL_TRANSPORT=sdk go test ./internal/host/... ./internal/runner/...'
	@$(PHASE) "the default suite on the go-sdk's code (HOSTEVAL_TRANSPORT=sdk hosteval run scenarios/)"
	@rm -rf results/sdk; out=$$(mktemp); \
	if HOSTEVAL_TRANSPORT=sdk ./$(BIN)/hosteval run -out results -run-id sdk -logs failed scenarios/ >$$out 2>&1; then \
		echo "    $$(tail -n 1 $$out)"; rm -f $$out; \
	else cat $$out; rm -f $$out; echo "make test-sdk: the suite did not pass on the go-sdk's code; records in results/sdk" >&2; exit 1; fi

## fuzz-short: the fuzz targets of the parsers that read what comes from
## outside (scenario YAML, JSON-RPC frames, the host's raw readers and
## writers), FUZZ_SHORT each; a failing input is written under the
## package's testdata/fuzz, as go test -fuzz does. Part of make test; every
## target's seed corpus runs in plain go test too.
FUZZ_SHORT ?= 10s
FUZZ_OUTSIDE := \
	./internal/scenario:FuzzLoad ./internal/yamlx:FuzzParseTag ./internal/model:FuzzParseCall ./internal/model:FuzzRequestBody ./internal/model:FuzzReadCompletion ./internal/model:FuzzReasoningShortcut \
	./internal/host:FuzzStdioFrames ./internal/host:FuzzDecodeEnvelope \
	./internal/host:FuzzReadSentResult ./internal/host:FuzzFlatArguments ./internal/host:FuzzToolReaders \
	./internal/host:FuzzRewriteParams ./internal/host:FuzzWithoutTTL ./internal/host:FuzzModelJSON \
	./internal/table:FuzzTextLayouts ./internal/tokens:FuzzSplit
fuzz-short:
	@$(PHASE) "fuzzing the parsers that face the outside: $(words $(FUZZ_OUTSIDE)) targets, $(FUZZ_SHORT) each"
	@out=$$(mktemp); trap 'rm -f $$out' EXIT; for t in $(FUZZ_OUTSIDE); do \
		pkg=$${t%%:*} name=$${t##*:}; \
		if $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZ_SHORT) $$pkg >$$out 2>&1; then \
			execs=$$(grep -o 'execs: [0-9]*' $$out | tail -n 1); \
			printf '    %-20s %-20s %s\n' "$$name" "$${pkg#./}" "$${execs:-the seed corpus and baseline coverage only}"; \
		else cat $$out; echo "make fuzz-short: $$name ($$pkg) failed: the input is under $$pkg/testdata/fuzz/$$name" >&2; exit 1; fi; \
	done

$(TESTPROGRESS): tools/testprogress/main.go
	@mkdir -p $(BIN)
	@$(GO) build -o $@ ./tools/testprogress

## test-load: the default suite, the MCP conformance suite and a catalog of
## the three npm peers while 2 busy loops per core saturate the machine:
## every case passes, with the protocol revisions of an idle machine
## (tools/loadtest/protocols.txt); see docs/reliability.md
test-load: build node-deps
	@$(PHASE) "the load test: the suite, the conformance suite and a catalog on a saturated machine (tools/loadtest/run.sh)"
	@GO=$(GO) tools/loadtest/run.sh $(BIN)/hosteval

vet:
	@$(PHASE) "go vet ./..."
	@$(GO) vet ./...

## browser-deps: Debian's chromium, for the browser tests, installed only
## when no Chromium is found (HOSTEVAL_CHROMIUM names one explicitly);
## installing it needs root
browser-deps:
	@if [[ -n "$$HOSTEVAL_CHROMIUM" ]]; then \
		$(PHASE) "browser-deps: HOSTEVAL_CHROMIUM=$$HOSTEVAL_CHROMIUM"; \
	elif p=$$(command -v chromium || command -v chromium-browser || command -v google-chrome || command -v google-chrome-stable); then \
		$(PHASE) "browser-deps: $$p is installed"; \
	elif [[ $$(id -u) != 0 ]]; then \
		echo "make browser-deps: Chromium is missing and installing it needs root: run" >&2; \
		echo "  sudo apt-get install -y chromium      (Debian, Ubuntu)" >&2; \
		echo "or set HOSTEVAL_CHROMIUM to a Chromium or Chrome binary, then make test again" >&2; \
		exit 2; \
	else \
		$(PHASE) "browser-deps: installing Debian's chromium (apt-get)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium </dev/null; \
	fi

## view: the pages over results/ on 127.0.0.1 (hosteval view)
view: build
	./$(BIN)/hosteval view results/

## conformance: the official MCP conformance suite against hosteval's host
## (hosteval conformance-client): every client scenario required for
## 2026-07-28, then the core suite, offline; fails on a regression and on a
## baseline entry (tools/conformance/expected-failures.yaml) that now passes
conformance: build node-deps
	@$(PHASE) "running the MCP conformance suite (tools/conformance/run.sh)"
	@tools/conformance/run.sh $(BIN)/hosteval

## bench: the Go benchmarks (speed and memory targets)
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-endpoint: issue 28's efficiency against a model endpoint (the
## fake one, delay 200 ms and 50 ms, -concurrency 8, 32 and 64): cases/s
## over the Little's-law bound, and the CPU a case costs hosteval, the
## shared server and the endpoint; COUNT runs of each, for benchstat.
## HOSTEVAL_BENCH_CPUPROFILE=PREFIX writes hosteval's CPU profiles.
bench-endpoint: build
	$(GO) test -run '^$$' -bench BenchmarkEndpointEfficiency -benchtime 1x -count $(or $(COUNT),3) ./cmd/hosteval

## bench-peers: 100 echo calls on server-everything, whole processes in
## turns: hosteval against the bare go-sdk client (tools/bench/sdkcall) and
## the eval harnesses of tools/bench/_npm (mcpvals, promptfoo: installed
## without their scripts, as mcpvals's runs pnpm); prints each one's
## median time and its ratio to the bare client. Not part of make test.
## Offline, or where npm cannot reach its registry, the npm peers are left
## out (said so) and hosteval is measured against the floor alone: the
## floor needs only make node-deps. PEERS=sdk-host,hosteval runs only
## those (and the floor), for long sets: ROUNDS=300 PEERS=sdk-host,hosteval.
BENCH_NPM := tools/bench/_npm
BENCH_STAMP := $(BENCH_NPM)/node_modules/.npm-ci-done
bench-peers: node-deps
	@$(MAKE) --no-print-directory $(BENCH_STAMP) || \
		echo "    make bench-peers: mcpvals and promptfoo could not be installed (offline?): measuring hosteval against the floor alone" >&2
	$(GO) run ./tools/bench/peers -rounds $(or $(ROUNDS),9) $(if $(PEERS),-peers $(PEERS))
$(BENCH_STAMP): $(BENCH_NPM)/package.json $(BENCH_NPM)/package-lock.json
	npm ci --prefix $(BENCH_NPM) --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

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

## release: static hosteval binaries for every platform, and their SHA-256
## sums, into dist/ (VERSION=v1.2.3; default: the tag at HEAD or a
## pseudo-version). Nothing is published.
release:
	@[[ -n "$(REVISION)" ]] || { echo "make release: needs a git checkout (the revision is part of the release)" >&2; exit 2; }
	@$(PHASE) "building release $(RELEASE_VERSION) for $(words $(RELEASE_PLATFORMS)) platforms into $(DIST)/ (static, -trimpath)"
	@$(if $(filter true,$(MODIFIED)),echo "    warning: the tree has uncommitted changes: the binaries say so (modified)")
	@rm -rf $(DIST) && mkdir -p $(DIST)
	@set -e; for p in $(RELEASE_PLATFORMS); do \
		os=$${p%/*} arch=$${p#*/} ext=; [[ $$os != windows ]] || ext=.exe; \
		out=$(DIST)/$(RELEASE_NAME)_$${os}_$${arch}$$ext; echo "    $$out"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath \
			-ldflags '-s -w -X $(BUILDINFO).version=$(RELEASE_VERSION) -X $(BUILDINFO).revision=$(REVISION) -X $(BUILDINFO).modified=$(MODIFIED)' \
			-o $$out ./cmd/hosteval; \
	done
	@cd $(DIST) && $(SHA256SUM) $(RELEASE_NAME)_*_* > $(RELEASE_NAME)_checksums.txt
	@echo "    $(DIST)/$(RELEASE_NAME)_checksums.txt"

## release-check: make release, then check every file: ELF/Mach-O/PE for the
## right architecture, static, CGO_ENABLED=0 and -trimpath, the version and
## revision stamped, the checksums; this machine's binary is run
release-check: release
	@$(PHASE) "checking the release files in $(DIST)/ (tools/releasecheck)"
	@$(GO) run ./tools/releasecheck -dist $(DIST) -version '$(RELEASE_VERSION)' -revision '$(REVISION)'

## image: the container image (Dockerfile); needs a Docker engine
image:
	@$(PHASE) "building the container image $(IMAGE)"
	docker build --build-arg VERSION=$(BUILD_VERSION) --build-arg REVISION=$(REVISION) --build-arg MODIFIED=$(MODIFIED) -t $(IMAGE) .

lint: lint-docker lint-ci lint-k8s

# The npm linters, pinned in tools/lint (its own lock file, like tools/node).
$(LINT_STAMP): $(LINT_DIR)/package.json $(LINT_DIR)/package-lock.json
	@$(PHASE) "installing the npm linters ($(LINT_DIR))"
	@npm ci --prefix $(LINT_DIR) --no-audit --no-fund --loglevel=error
	@touch $@

## lint-docker: the Dockerfile through two linters from npm: dockerfile-utils
## (the syntax and flags of every instruction) and dockerfilelint (best
## practice), then the house rules (go test ./deploy: non-root, exec-form
## ENTRYPOINT, /results, the pinned Node). No Docker engine needed: the
## image itself is built by `make image`
lint-docker: $(LINT_STAMP)
	@$(PHASE) "linting the Dockerfile (dockerfile-utils, dockerfilelint, go test ./deploy)"
	@node $(LINT_DIR)/node_modules/dockerfile-utils/bin/dockerfile-utils lint Dockerfile
	@node $(LINT_DIR)/node_modules/dockerfilelint/bin/dockerfilelint Dockerfile
	@$(GO) test -count=1 -run 'TestDockerfile|TestFixtureServers' ./deploy

## lint-ci: the workflows (and their use of action.yml) through actionlint,
## run from the Go module proxy, then action.yml itself (go test ./deploy:
## strict keys, inputs, outputs, its scripts run as the runner runs them).
## With shellcheck on PATH both check every run: script too
lint-ci:
	@$(PHASE) "linting .github/workflows and action.yml (actionlint $(ACTIONLINT_VERSION), go test ./deploy)"
	@command -v shellcheck >/dev/null || echo "    shellcheck is not installed (apt-get install shellcheck): the run: scripts go unchecked"
	@$(GO) run $(ACTIONLINT) -no-color
	@$(GO) test -count=1 -run 'TestAction|TestExampleWorkflow|TestShardRecipes' ./deploy

## lint-k8s: the manifests of deploy/kubernetes decoded strictly into the
## Kubernetes API types, offline (tools/k8scheck, its own go.mod)
lint-k8s:
	@$(PHASE) "checking deploy/kubernetes against the Kubernetes API types (tools/k8scheck)"
	@cd tools/k8scheck && $(GO) test -count=1 . && $(GO) run . ../../deploy/kubernetes

## goreleaser-check: .goreleaser.yaml through GoReleaser's own check (built
## from the Go module proxy on first use: several minutes)
goreleaser-check:
	@$(PHASE) "checking .goreleaser.yaml (goreleaser $(GORELEASER_VERSION) check)"
	@$(GO) run $(GORELEASER) check

## cassettes: record the suite's real-model scenarios into scenarios/cassettes
## (make run and make test replay them offline): against the project's test
## endpoint (servers/fakeapi), or against a real one when OPENAI_BASE_URL is
## set (make cassettes OPENAI_BASE_URL=http://host:8000/v1; the key, if any,
## in OPENAI_API_KEY). Review the diff and commit it.
CASSETTE_SCENARIOS := scenarios/real-ab.yaml scenarios/real-gate.yaml scenarios/routing.yaml
cassettes: build
ifdef OPENAI_BASE_URL
	@$(PHASE) "recording scenarios/cassettes against $(OPENAI_BASE_URL)"
	./$(BIN)/hosteval run -record scenarios/cassettes $(CASSETTE_SCENARIOS)
else
	@$(PHASE) "recording scenarios/cassettes against the test endpoint (servers/fakeapi)"
	./$(BIN)/fakeapi -config scenarios/cassettes/fakeapi.yaml -now 2026-01-01T00:00:00Z -- \
	  ./$(BIN)/hosteval run -record scenarios/cassettes $(CASSETTE_SCENARIOS)
endif

clean:
	rm -rf $(BIN) $(DIST) $(NODE_DIR)/node_modules $(LINT_DIR)/node_modules $(BENCH_NPM)/node_modules
