# bgcmd: the README's two commands are `make run` and `make test`.
GO      ?= go
BIN     := bin/bgcmd
PKGS    := ./...

.PHONY: all build run test bench fuzz soak clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/bgcmd

# The main job on an embedded default: a temporary home and policy, a command
# in the background, its status and output, the history.
run: build
	./scripts/demo.sh $(BIN)

test:
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 $(PKGS)

# Every benchmark, each beside a baseline measured in the same run.
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 $(PKGS)

clean:
	rm -rf bin
