#!/usr/bin/env bash
# The main job of bgcmd on an embedded default: a temporary home and policy,
# a command started in the background, its status, a page of its output and
# the history. Run by `make run`.
set -euo pipefail
BIN=${1:-bin/bgcmd}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
HOME_DIR=$(mktemp -d "${TMPDIR:-/tmp}/bgcmd-demo.XXXXXX")
trap 'rm -rf "$HOME_DIR"' EXIT
export BGCMD_HOME=$HOME_DIR

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

echo "bgcmd demo: home $HOME_DIR (removed afterwards)"
step "$BIN" list
