# sbench — build, demo and tests. See README.md.
GO      ?= go
BIN     ?= bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION) -X github.com/sbench/sbench/runner.Version=$(VERSION)
# Where make test-slurm starts its throw-away cluster.
LAB     ?= /tmp/sbench-slurm-lab
FUZZTIME ?= 30s

.PHONY: all build demo test test-race test-short test-long test-slurm fuzz vet clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/sbench ./cmd/sbench
	CGO_ENABLED=0 $(GO) build -tags netgo,osusergo -trimpath -ldflags '-s -w $(LDFLAGS)' -o $(BIN)/sbench-runner ./cmd/sbench-runner

# Binaries, man pages (sbench gen-docs) and bash, zsh and fish completion
# under $(DESTDIR)$(PREFIX). The pages' date is the last commit's, or
# $(SOURCE_DATE_EPOCH), never the build's.
PREFIX  ?= /usr/local
DESTDIR ?=
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
.PHONY: install
install: build
	rm -rf $(BIN)/man1 && SOURCE_DATE_EPOCH='$(SOURCE_DATE_EPOCH)' $(BIN)/sbench gen-docs --man $(BIN)/man1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 $(BIN)/sbench $(BIN)/sbench-runner $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BIN)/man1/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	$(BIN)/sbench completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/sbench
	$(BIN)/sbench completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_sbench
	$(BIN)/sbench completion fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/sbench.fish

# The main job on the embedded default: a local campaign -> SQLite -> PDF.
demo: build
	rm -f demo.db
	$(BIN)/sbench local examples/quickstart.toml --db demo.db
	$(BIN)/sbench report --db demo.db -o report.pdf
	@echo "demo: open report.pdf (archive: demo.db)"

# The articles' published outputs (examples/articles/testdata) as sbench
# reports, one PDF per article in examples/articles/out. Their Korean and
# Japanese titles render with fonts-nanum and fonts-ipafont-gothic installed.
.PHONY: articles
articles: build
	SBENCH=$(BIN)/sbench examples/articles/make-reports.sh

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

# Tests that need a running Slurm; make test leaves them to make test-slurm.
SLURM_NAMES := TestSlurm.*|TestRealCluster
SLURM_TESTS := ^($(SLURM_NAMES))$$
# Integration comparisons that take minutes (testenv.Long); make test
# leaves them to make test-long.
LONG_NAMES  := TestLocalToolsVsNative|TestLocalExamples
LONG_TESTS  := ^($(LONG_NAMES))$$
NOT_HERE    := ^($(SLURM_NAMES)|$(LONG_NAMES))$$

# Unit, golden and local end-to-end tests; no root and no Slurm needed.
# go test's default -timeout (10 minutes a package) is not a budget on a
# busy machine: cmd/sbench's tests, 70 s on two quiet cores, ran past it at
# load 20. A hung test is stopped by its own bound (testenv.Context).
TEST_TIMEOUT ?= 30m
test: vet
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -skip '$(NOT_HERE)' ./...

# The same tests under the race detector (every package's take under a
# minute with it here; CI runs this too).
test-race:
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -skip '$(NOT_HERE)' ./...

# The long integration comparisons, and only them.
test-long:
	SBENCH_LONG=1 $(GO) test -count=1 -run '$(LONG_TESTS)' ./...

test-short:
	$(GO) test -short ./...

# End-to-end against a real Slurm: starts munged, slurmctld and two slurmd
# (fake nodes n1, n2 on 127.0.0.1) under $(LAB), runs the Slurm tests, stops
# everything it started.
test-slurm: build
	slurm/testcluster/run-tests.sh $(LAB) '$(SLURM_TESTS)'

# Every fuzz target for $(FUZZTIME) each.
fuzz:
	scripts/fuzz-all.sh $(FUZZTIME)

clean:
	rm -rf $(BIN) demo.db report.pdf sbench-runs
