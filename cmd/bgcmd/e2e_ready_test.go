package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// readyHome is a home whose policy also allows the readiness fixtures and
// output up to 2 GiB a stream.
func readyHome(t *testing.T) *home {
	t.Helper()
	h := newHome(t)
	allowed := []string{fixture(t, "ready-after.sh"), fixture(t, "big-then-ready.sh")}
	quoted, _ := json.Marshal(allowed)
	h.writePolicy(fmt.Sprintf("allowed_executables = %s\ncwd_root = %q\ndefault_timeout = \"2m\"\nmax_output_bytes = %d\n",
		quoted, h.root, int64(2)<<30))
	return h
}

// background starts bgcmd with the home's environment without waiting for
// it; finish collects its result.
func (h *home) background(args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	h.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = h.root, h.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(h.t, cmd.Start())
	return cmd, &out, &errb
}

func finish(t *testing.T, cmd *exec.Cmd, out, errb *bytes.Buffer) result {
	t.Helper()
	return resultOf(t, cmd.Wait(), out, errb)
}

func TestWaitUntilOutputReturnsOnTheLineWhileTheJobRuns(t *testing.T) {
	t.Parallel()
	h := readyHome(t)
	gate, release := filepath.Join(h.root, "gate"), filepath.Join(h.root, "release")
	id := h.start(fixture(t, "ready-after.sh"), gate, "out", "ready on 8080", release)
	t.Cleanup(func() { os.WriteFile(release, nil, 0o600); h.bgcmd("wait", id) })

	cmd, out, errb := h.background("wait", id, "--until-output", `ready on \d+`, "--timeout", "2m")
	require.NoError(t, os.WriteFile(gate, nil, 0o600)) // printed after the wait began
	r := finish(t, cmd, out, errb)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "stdout:2:ready on 8080\n", r.stdout)
	require.Equal(t, "running", h.peekState(id), "the job keeps running after the match")

	// A line printed before the wait began counts too; JSON names it.
	r = h.bgcmd("--json", "wait", id, "--until-output", "^ready")
	require.Equal(t, 0, r.code, r.stderr)
	var m struct {
		Outcome, Stream, Text string
		Line                  int
		Status                struct{ State string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &m), r.stdout)
	require.Equal(t, "matched", m.Outcome)
	require.Equal(t, "stdout", m.Stream)
	require.Equal(t, 2, m.Line)
	require.Equal(t, "ready on 8080", m.Text)
	require.Equal(t, "running", m.Status.State)

	// --from-line past it: the wait elapses (exit 5) and the job runs on.
	r = h.bgcmd("wait", id, "--until-output", "^ready", "--from-line", "2", "--timeout", "100ms")
	require.Equal(t, 5, r.code, r.stderr)
	require.Contains(t, r.stderr, "keeps running")
	require.Equal(t, "running", h.peekState(id))
}

func TestWaitUntilOutputOnStderr(t *testing.T) {
	t.Parallel()
	h := readyHome(t)
	release := filepath.Join(h.root, "release")
	id := h.start(fixture(t, "ready-after.sh"), "-", "err", "Listening at :9000", release)
	t.Cleanup(func() { os.WriteFile(release, nil, 0o600); h.bgcmd("wait", id) })

	r := h.bgcmd("wait", id, "--until-output", "Listening", "--stream", "stderr", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "stderr:2:Listening at :9000\n", r.stdout)

	r = h.bgcmd("wait", id, "--until-output", "Listening", "--stream", "stdout", "--timeout", "100ms")
	require.Equal(t, 5, r.code, "the line is on stderr, not stdout: %s", r.stderr)
}

func TestWaitUntilOutputExits6WhenTheJobEndsWithoutAMatch(t *testing.T) {
	t.Parallel()
	h := readyHome(t)
	id := h.start(fixture(t, "ready-after.sh"), "-", "out", "nothing to see", "-")
	r := h.bgcmd("wait", id, "--until-output", "ready", "--timeout", "2m")
	require.Equal(t, 6, r.code, r.stderr)
	require.Contains(t, r.stdout, "exited", "the settled status is shown")
	require.Contains(t, r.stderr, "no line matching")
	require.Contains(t, h.ok("list", "--unread"), id, "waiting for output does not mark the job read")
}

func TestWaitUntilOutputRefusesBadUsage(t *testing.T) {
	t.Parallel()
	h := readyHome(t)
	id := h.start(fixture(t, "ready-after.sh"), "-", "out", "x", "-")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--until-output", "ready(("}, "not a valid regular expression"},
		{[]string{"--until-output", ""}, "give a regular expression"},
		{[]string{"--until-output", "x", "--stream", "stdin"}, `--stream "stdin"`},
		{[]string{"--until-output", "x", "--from-line", "-3"}, "negative"},
		{[]string{"--stream", "stderr"}, "only with --until-output"},
	} {
		r := h.bgcmd(append([]string{"wait", id}, tc.args...)...)
		require.Equal(t, 2, r.code, "%v: %s", tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want, tc.args)
	}
}

// The match at the end of a large output is found by one streaming pass:
// the waiting process never holds the log in memory (its peak RSS, from
// the kernel, stays a small fraction of the output). Under the race
// detector, which Go documents as taking 5 to 10 times the memory, the
// bound is twice the plain build's: a race-built wait on a busy machine
// peaked at 128 and 131 MiB, where one alone peaks at 60 to 75.
func TestWaitUntilOutputScansALargeOutputInBoundedMemory(t *testing.T) {
	t.Parallel()
	size := int64(1) << 30
	if testing.Short() {
		size = 64 << 20
	}
	if s := os.Getenv("BGCMD_TEST_READY_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
		size = n
	}
	h := readyHome(t)
	id := h.start(fixture(t, "big-then-ready.sh"), strconv.FormatInt(size, 10), "ready at the end")
	cmd, out, errb := h.background("wait", id, "--until-output", "^ready at", "--timeout", "10m")
	r := finish(t, cmd, out, errb)
	require.Equal(t, 0, r.code, r.stderr)
	lines := size/1000 + 2 // the full lines, the line echo ends, the message
	require.Equal(t, fmt.Sprintf("stdout:%d:ready at the end\n", lines), r.stdout)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	require.True(t, ok)
	peak := ru.Maxrss << 10 // KiB on Linux
	bound := int64(128) << 20
	if raceEnabled {
		bound *= 2
	}
	require.Less(t, peak, bound, "peak RSS %d MiB while scanning %d MiB of output", peak>>20, size>>20)
	t.Logf("scanned %d MiB with a peak RSS of %d MiB", size>>20, peak>>20)
	require.Equal(t, 0, h.bgcmd("wait", id).code)
}
