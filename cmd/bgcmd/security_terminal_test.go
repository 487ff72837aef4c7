package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// termSpoofChars are what oneLine escapes that a terminal acts on: ESC
// (CSI, OSC), the 8-bit CSI, and the right-to-left override.
var termSpoofChars = []string{"\x1b", "\u009b", "\u202e"}

func requireNoTermControl(t *testing.T, what, out string) {
	t.Helper()
	for _, c := range termSpoofChars {
		require.NotContains(t, out, c, "%s reaches the terminal raw: %q", what, out)
	}
}

// An agent (MCP run_command_bg, a policy without allowed_env) named an
// environment variable with terminal escapes in it; bgcmd stored the
// names of the replaced environment, and when the operator later ran
// `bgcmd rerun ID`, the refusal listed them raw on stderr, as --env flags
// to paste: the escapes erased the line and wrote over what bgcmd said. A
// name that is not a plain variable name is now refused at the start (the
// refusal quotes it), and every line of an error the CLI prints goes
// through oneLine.
func TestAnAgentsEnvNameWithEscapesIsRefused(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	agent := env.start(t)
	name := "CI\x1b[2K\r\x1b[1Abgcmd: rerun ok\x1b[8m"
	te, text := agent.fail("run_command_bg", map[string]any{
		"argv": []string{mcpFixture(t, "exit-with.sh"), "0"},
		"env":  map[string]string{"PATH": "/usr/bin:/bin", name: "1"},
	})
	require.Equal(t, "bad_env", te.Code, text)
	requireNoTermControl(t, "the refusal of an env name", te.Message)
	for _, bad := range []string{"X$(id)", "A B", "1ABC", "X\u202e", "-X"} {
		te, text := agent.fail("run_command_bg", map[string]any{
			"argv": []string{mcpFixture(t, "exit-with.sh"), "0"},
			"env":  map[string]string{"PATH": "/usr/bin:/bin", bad: "1"},
		})
		require.Equal(t, "bad_env", te.Code, "%q: %s", bad, text)
	}
	st := mcpOK[map[string]any](agent, "run_command_bg", map[string]any{
		"argv":    []string{mcpFixture(t, "exit-with.sh"), "0"},
		"env":     map[string]string{"PATH": "/usr/bin:/bin", "npm_config.cache-dir": "1", "_X1": "2"},
		"wait_ms": 60000,
	})
	require.NotEmpty(t, (*st)["task_id"], "plain names pass: %v", *st)
}

// The operator types a short id and it matches two jobs: the ambiguity
// error listed each candidate's argv (the JSON of the column) raw, and
// JSON escapes neither C1 controls (U+009B is CSI) nor bidirectional
// overrides, which every other place the CLI shows argv escapes.
func TestTheAmbiguousIDErrorShowsNoRawArgv(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	a := h.start(fixture(t, "exit-with.sh"), "0", "\u009b2J\u009b1;1Hx")
	b := h.start(fixture(t, "exit-with.sh"), "0", "\u202etset ekam")
	// Their longest common prefix: ids begin with the milliseconds of their
	// creation, so jobs started together share the first 4 hex digits (which
	// change every 50 days) and mostly the first 8, but not always: the
	// 8th changes every 65.5 s, and two starts may fall on either side.
	var ref string
	for n := 1; n < len(a) && a[:n] == b[:n]; n++ {
		ref = a[:n]
	}
	require.GreaterOrEqual(t, len(ref), 4, "%s %s", a, b)
	for _, verb := range []string{"kill", "status", "wait"} {
		r := h.bgcmd(verb, ref)
		require.Equal(t, exitUsage, r.code, "%s: %q %q", verb, r.stdout, r.stderr)
		require.Contains(t, r.stderr, "ambiguous")
		requireNoTermControl(t, "an agent's argv in the ambiguous-id error of "+verb, r.stderr)
	}
}

// A job's working directory was shown by `status` (and `wait`, `run
// --wait`) without oneLine, unlike its command, labels and error: a
// directory inside cwd_root whose name holds escapes (a repository may
// hold one; any allowed program that makes directories can make one)
// reaches the terminal raw.
func TestStatusShowsNoRawCwd(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	dir := filepath.Join(h.root, "w\x1b[2K\r\x1b[1Astate    exited 0\x1b[8m")
	require.NoError(t, os.Mkdir(dir, 0o700))
	id := strings.TrimSpace(h.ok("run", "--cwd", dir, "--", fixture(t, "exit-with.sh"), "0"))
	r := h.bgcmd("wait", id)
	require.Equal(t, 0, r.code, r.stderr)
	requireNoTermControl(t, "the cwd in bgcmd wait's status", r.stdout)
	requireNoTermControl(t, "the cwd in bgcmd status", h.ok("status", id))
}

// `wait --until-output` printed the matching line as STREAM:LINE:TEXT with
// TEXT raw, while status's tail preview of the same output is escaped:
// the job's line can erase bgcmd's own prefix and write another, or set
// the terminal's title / clipboard (OSC).
func TestWaitUntilOutputPrintsNoRawLine(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start("/usr/bin/env", "printf", `starting\033[2K\rstderr:1:listening on :8080 \033]0;owned\007\n`)
	r := h.bgcmd("wait", id, "--until-output", "starting")
	require.Equal(t, 0, r.code, "%q %q", r.stdout, r.stderr)
	require.True(t, strings.HasPrefix(r.stdout, "stdout:1:"), r.stdout)
	requireNoTermControl(t, "the job's output line in wait --until-output", r.stdout)
	// status's tail preview of the same line is escaped:
	requireNoTermControl(t, "status tail", h.ok("status", id))
}

// `output --grep` printed LINE:TEXT with TEXT raw: the same class as
// wait --until-output (bgcmd composes the line, the job fills it).
func TestOutputGrepPrintsNoRawLine(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start("/usr/bin/env", "printf", `ok\033[2K\r1:PASS\n`)
	require.Equal(t, 0, h.bgcmd("wait", id).code)
	out := h.ok("output", id, "--grep", "ok")
	requireNoTermControl(t, "the job's output line in output --grep", out)
}
