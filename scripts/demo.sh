#!/usr/bin/env bash
# The main job of bgcmd on an embedded default: a temporary home and policy,
# a command started in the background, its status, a page of its output and
# the history. Run by `make run`; needs only the bgcmd binary and a POSIX
# system (the commands it runs are /bin/ls, /usr/bin/env, /usr/bin/seq when
# present, and the repository's test fixtures).
set -euo pipefail
BIN=${1:-bin/bgcmd}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
REPO=$(cd "$(dirname "$0")/.." && pwd)
FIX=$REPO/testdata
HOME_DIR=$(mktemp -d "${TMPDIR:-/tmp}/bgcmd-demo.XXXXXX")
WORK=$HOME_DIR/work
cleanup() {
	# Leave nothing running, whatever happened above.
	"$BIN" --json list --state running 2>/dev/null |
		sed -n 's/^{"id":"\([^"]*\)".*/\1/p' |
		while read -r id; do "$BIN" kill --signal KILL "$id" >/dev/null 2>&1 || true; done
	rm -rf "$HOME_DIR"
}
trap cleanup EXIT
export BGCMD_HOME=$HOME_DIR
unset BGCMD_POLICY BGCMD_SESSION
mkdir -p "$WORK"

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' reset=$'\033[0m'; else bold='' reset=''; fi
say() { printf '\n%s# %s%s\n' "$bold" "$*" "$reset"; }
# prompt prints the command line, quoting arguments a shell would split.
prompt() {
	local line=bgcmd a
	for a in "$@"; do
		case $a in
		*[[:space:]\|\&\;\<\>\(\)\$\*\?\'\"]* | '') line+=" '${a//\'/\'\\\'\'}'" ;;
		*) line+=" $a" ;;
		esac
	done
	printf '%s$ %s%s\n' "$bold" "$line" "$reset"
}
show() { prompt "$@"; "$BIN" "$@"; }
# shows a command that is expected to fail, with its exit code.
fails() {
	prompt "$@"
	local code=0
	"$BIN" "$@" || code=$?
	printf '(exit %d)\n' "$code"
}

SEQ=$(command -v seq || true)
allowed="\"$FIX/slow-lines.sh\", \"$FIX/exit-with.sh\", \"$FIX/ignore-term.sh\", \"/usr/bin/env\", \"/bin/ls\""
[ -n "$SEQ" ] && allowed="$allowed, \"$SEQ\""

echo "bgcmd demo: home $HOME_DIR (removed afterwards)"
show --version

say "Without a policy every start is refused, and bgcmd says how to make one."
fails run -- /bin/ls

cat >"$HOME_DIR/policy.toml" <<EOF
allowed_executables = [$allowed]
cwd_root = "$WORK"
default_timeout = "1m"
kill_grace = "2s"
max_output_bytes = 10485760
EOF
say "The policy: an exact allowlist of executables and a sandbox root."
cat "$HOME_DIR/policy.toml"
cd "$WORK"

say "Start a command in the background: bgcmd prints its id at once."
prompt run -- "$FIX/slow-lines.sh" 5 0.3
id=$("$BIN" run -- "$FIX/slow-lines.sh" 5 0.3)
echo "$id"

short=${id##*-}
say "It runs on while we look at it; any unique end (or start) of its id names it."
show status "$short"

say "Wait for readiness, not for the end: return on the first line that matches."
show wait "$short" --until-output 'line 2'
show output "$short" --unit lines --offset 0 --limit 2

say "Wait for it: bgcmd exits with the command's own exit code."
show wait "$short"
show --json output "$id" --unit lines --offset 2 --limit 3

say "More jobs: a failure, a timeout, and a killed one (it ignores SIGTERM)."
fails run --wait -- "$FIX/exit-with.sh" 3
fails run --wait --timeout 500ms -- "$FIX/slow-lines.sh" 100 0.1
killme=$("$BIN" run --session other -- "$FIX/ignore-term.sh")
show kill "$killme"
[ -n "$SEQ" ] && "$BIN" run --wait -- "$SEQ" 1 100000 >/dev/null
"$BIN" run --wait --replace-env --env GREETING=hello -- /usr/bin/env >/dev/null

say "A shell line is not an argv: refused with a reason and a hint (exit 3)."
fails run -- "ls -la | grep secret"
fails run -- /usr/bin/rm -rf "$WORK"

say "The history, newest first (this session's jobs; --all-sessions shows every session)."
show list
show list --all-sessions --state killed

say "History is SQL, on a read-only connection (docs/schema.md)."
show sql "SELECT exe, jobs, failures, timeouts FROM failures_by_exe ORDER BY failures DESC"
show sql "SELECT state, exit_code, duration_ms FROM job_durations ORDER BY id"
show sql "SELECT code, argv0 FROM refusal_log"
fails sql "DELETE FROM jobs"

say "Retention is explicit: see what would go, then prune it."
show prune --state timeout,killed --dry-run
show prune --state timeout,killed
show gc
