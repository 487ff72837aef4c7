//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAHookOfAJobADispatchSettlesLeavesNothingRunning: a queued job that
// a dispatch pass settles (dependency_failed: here at once, since its
// --after job already exited 1) has its on_settle hook run as every other
// settle's is. The dispatch pass had run it in whatever process
// dispatched (here the `bgcmd run` itself), with no reaper, so what the
// hook left in a session of its own (setsid) outlived it. An agent picks
// this path at will (run --after a job that failed).
func TestAHookOfAJobADispatchSettlesLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	dir := t.TempDir()
	allowed, _ := json.Marshal([]string{fixture(t, "exit-with.sh")})
	hook, _ := json.Marshal([]string{fixture(t, "on-settle-escape.sh"), dir})
	h.writePolicy(fmt.Sprintf("allowed_executables = %s\ncwd_root = %q\non_settle = %s\non_settle_timeout = \"30s\"\n",
		allowed, h.root, hook))

	failed := h.start(fixture(t, "exit-with.sh"), "1")
	require.Equal(t, 1, h.bgcmd("wait", failed).code)
	id := strings.TrimSpace(h.ok("run", "--after", failed, "--", fixture(t, "exit-with.sh"), "0"))
	require.Regexp(t, uuidRE, id)
	require.Equal(t, "dependency_failed", h.peekState(id))

	eventually(t, "the dependant's hook to finish", func() bool {
		return strings.Contains(h.ok("sql", "--csv", "SELECT outcome FROM hook_runs WHERE job_id = '"+id+"'"), "\nok")
	})
	b, err := os.ReadFile(filepath.Join(dir, id+".pid"))
	require.NoError(t, err, "the hook wrote its descendant's pid before it exited 0")
	left, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	sleeper := func() bool {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", left))
		return string(cmdline) == "sleep\x00311\x00" && !isZombie(left)
	}
	t.Cleanup(func() {
		if sleeper() {
			_ = syscall.Kill(left, syscall.SIGKILL)
		}
	})
	eventually(t, "the setsid descendant of the hook of a job dispatch settled to be killed", func() bool { return !sleeper() })
}

// TestAHookADispatchRunsGetsNoDescriptorOfTheDispatcher: the same path
// had started the hook from the CLI process with exec.Cmd alone, so every
// descriptor the CLI's caller left open without close-on-exec (here fd 3,
// a file only this test knows) was open in the hook. A hook a supervisor
// runs gets none of them.
func TestAHookADispatchRunsGetsNoDescriptorOfTheDispatcher(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	dir := t.TempDir()
	hookScript := filepath.Join(dir, "list-fds.sh")
	require.NoError(t, os.WriteFile(hookScript, []byte("#!/bin/sh\nexec /bin/ls -l /proc/self/fd/ > \"$1/$BGCMD_JOB_ID.fds\" 2>&1\n"), 0o700))
	allowed, _ := json.Marshal([]string{fixture(t, "exit-with.sh")})
	hook, _ := json.Marshal([]string{hookScript, dir})
	h.writePolicy(fmt.Sprintf("allowed_executables = %s\ncwd_root = %q\non_settle = %s\non_settle_timeout = \"30s\"\n",
		allowed, h.root, hook))

	failed := h.start(fixture(t, "exit-with.sh"), "1")
	require.Equal(t, 1, h.bgcmd("wait", failed).code)

	marker := filepath.Join(t.TempDir(), "callers-private-descriptor")
	f, err := os.Create(marker)
	require.NoError(t, err)
	defer f.Close()
	cmd := exec.Command(binary, "run", "--after", failed, "--", fixture(t, "exit-with.sh"), "0")
	cmd.Dir, cmd.Env = h.root, h.env
	cmd.ExtraFiles = []*os.File{f} // fd 3 in bgcmd, without close-on-exec
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.Equal(t, 0, resultOf(t, cmd.Run(), &out, &errb).code, errb.String())
	id := strings.TrimSpace(out.String())
	require.Equal(t, "dependency_failed", h.peekState(id))

	listing := filepath.Join(dir, id+".fds")
	eventually(t, "the hook to list its descriptors", func() bool {
		return strings.Contains(h.ok("sql", "--csv", "SELECT outcome FROM hook_runs WHERE job_id = '"+id+"'"), "\nok")
	})
	b, err := os.ReadFile(listing)
	require.NoError(t, err)
	require.NotContains(t, string(b), marker, "the hook holds a descriptor of the process that dispatched:\n%s", b)
}

// TestARunWhoseDispatchSettlesAJobDoesNotWaitForItsHook: a short command
// that settles a job does not wait for the job's on_settle hook but hands
// it to a detached supervisor. A `bgcmd run --after` a job that failed,
// settling the new job dependency_failed in its own dispatch pass, had run
// the hook itself and waited for it in Runner.Close, up to
// on_settle_timeout: the hook here waits for a file this test creates only
// once the run has returned.
func TestARunWhoseDispatchSettlesAJobDoesNotWaitForItsHook(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	release := filepath.Join(t.TempDir(), "release")
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o600) })
	allowed, _ := json.Marshal([]string{fixture(t, "exit-with.sh")})
	hook, _ := json.Marshal([]string{fixture(t, "wait-for-file.sh"), release})
	h.writePolicy(fmt.Sprintf("allowed_executables = %s\ncwd_root = %q\non_settle = %s\non_settle_timeout = \"30m\"\n",
		allowed, h.root, hook))
	failed := h.start(fixture(t, "exit-with.sh"), "1")
	require.Equal(t, 1, h.bgcmd("wait", failed).code)

	_, out, done := h.inBackground("run", "--after", failed, "--", fixture(t, "exit-with.sh"), "0")
	select {
	case code := <-done:
		require.Equal(t, 0, code, "run: %s", out)
	case <-time.After(pollDeadline):
		t.Fatal("a `bgcmd run` whose dispatch settled its job dependency_failed waited for the job's on_settle hook")
	}
	id := strings.TrimSpace(out.String())
	require.Equal(t, "dependency_failed", h.peekState(id))
}
