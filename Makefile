# bgcmd: the README's two commands are `make run` and `make test`.
GO      ?= go
BIN     := bin/bgcmd
PKGS    := ./...

.PHONY: all build run test bench fuzz soak clean pg

all: build

# Three binaries, side by side:
# - bgcmd, lean: built with the tag LEAN_TAG (internal/launch.LeanTag), it
#   leaves out the MCP server, the web view, the git tools, the PostgreSQL
#   driver and the migrations, whose packages every `bgcmd run` would
#   otherwise initialise (180 packages rather than 330). It hands mcp, ui,
#   git and any command whose store needs the rest (a PostgreSQL store, a
#   new or older SQLite one) to bgcmd-full, in the same process.
# - bgcmd-full: the same program with every command (as go build or go
#   install builds bgcmd).
# - bgcmd-supervisor: the detached supervisor each background command runs
#   under, lean too; bgcmd-full supervises a PostgreSQL store's jobs.
# All three carry the same build stamp, a digest of the build IDs of every
# package the three link (so it changes with any of their sources and with
# the toolchain); each hands over only to a binary of its own build (see
# internal/launch and cmd/bgcmd/handover.go).
# CGO_ENABLED=0: static binaries (the net package would otherwise pull in
# cgo and the dynamic loader), which every bgcmd run and every detached
# supervisor start pays for before main.
STAMP_VAR := github.com/bgcmd/bgcmd/internal/launch.buildStamp
LEAN_TAG  := bgcmd_lean
build:
	@mkdir -p $(dir $(BIN))
	stamp=$$( { CGO_ENABLED=0 $(GO) list -tags $(LEAN_TAG) -deps -export -f '{{.BuildID}}' ./cmd/bgcmd ./cmd/bgcmd-supervisor && \
		CGO_ENABLED=0 $(GO) list -deps -export -f '{{.BuildID}}' ./cmd/bgcmd; } | sha256sum | cut -c1-32) && \
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -tags $(LEAN_TAG) -ldflags "-X $(STAMP_VAR)=$$stamp" -o $(BIN) ./cmd/bgcmd && \
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -ldflags "-X $(STAMP_VAR)=$$stamp" -o $(BIN)-full ./cmd/bgcmd && \
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -tags $(LEAN_TAG) -ldflags "-X $(STAMP_VAR)=$$stamp" -o $(dir $(BIN)) ./cmd/bgcmd-supervisor

# The main job on an embedded default: a temporary home and policy, a command
# in the background, its status and output, the history.
run: build
	./scripts/demo.sh $(BIN)

# BGCMD_TEST_PG (a postgres:// URL, as `make pg` prints) runs the store
# contract and the PostgreSQL tests against that server too; without it
# they are skipped, saying so (under CI=true they fail instead).
# -timeout: go test's default of 10 minutes per package is a wall-clock
# limit a busy 2-core machine can reach with the race detector on; no test
# depends on speed, so the limit is only there to end a hung run.
test:
	$(GO) vet $(PKGS)
	CGO_ENABLED=0 $(GO) build -tags $(LEAN_TAG) ./cmd/...
	BGCMD_TEST_PG="$(BGCMD_TEST_PG)" $(GO) test -race -count=1 -timeout 40m $(PKGS)

# A throwaway PostgreSQL server for trying bgcmd on PostgreSQL and for
# BGCMD_TEST_PG: a cluster in a temporary directory, reachable only by its
# Unix socket there; it prints the DSN and is removed when stopped (Ctrl-C).
pg:
	./scripts/pg shell

# Every benchmark of the project, each beside a baseline measured in the same
# run (the same work without bgcmd), gathered into bench/REPORT.md and
# bench/report.json (machine line, figure, baseline, ratio, aim). The
# benchmarks whose one run takes seconds (capture, reconcile, prune) take at
# least three samples, bgcmd and baseline interleaved, and the report shows
# their median and spread. BENCH_CAPTURE_MB and BENCH_LOG_MB size the big
# inputs (the capture benchmarks' output, the log the reader pages).
BENCHTIME        ?= 1s
BENCH_CAPTURE_MB ?= 1024
BENCH_LOG_MB     ?= 1024
bench:
	$(GO) run ./bench/report -benchtime $(BENCHTIME) -capture-mb $(BENCH_CAPTURE_MB) -log-mb $(BENCH_LOG_MB) -out bench $(PKGS)

# The soak and crash suite at full size (thousands of jobs through the real
# binary while hosts and supervisors are SIGKILLed), the refusal table and the
# storage faults; it stops by itself after SOAK_JOBS jobs or SOAK_DURATION,
# whichever comes first, and writes its figures to bench/SOAK.md. A short
# version of the same tests runs in `make test`.
SOAK_JOBS     ?= 2000
SOAK_DURATION ?= 3m
soak:
	BGCMD_SOAK_JOBS=$(SOAK_JOBS) BGCMD_SOAK_DURATION=$(SOAK_DURATION) BGCMD_SOAK_SUMMARY=$(CURDIR)/bench/SOAK.md \
		$(GO) test -count=1 -timeout 30m -v ./soak

# Each fuzz target of the project for FUZZTIME (their seed corpora run in
# `make test`). Targets are found by name, so new ones join by themselves.
FUZZTIME ?= 20s
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
		dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
		for target in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
			echo "== $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

clean:
	rm -rf bin
