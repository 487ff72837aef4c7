package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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

// inBackground runs bgcmd without waiting; the caller waits on the result
// channel.
func (h *home) inBackground(args ...string) (*exec.Cmd, *bytes.Buffer, <-chan int) {
	h.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = h.root, h.env
	var out bytes.Buffer
	cmd.Stdout = &out
	require.NoError(h.t, cmd.Start())
	done := make(chan int, 1)
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			done <- ee.ExitCode()
			return
		}
		done <- 0
	}()
	h.t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, &out, done
}

func TestWaitAnyReturnsOnTheShortJob(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	long := h.start(fixture(t, "wait-for-file.sh"), filepath.Join(h.root, "never"))
	t.Cleanup(func() { h.bgcmd("kill", "--signal", "SIGKILL", long) })
	gate := filepath.Join(h.root, "short")
	short := h.start(fixture(t, "wait-for-file.sh"), gate, "3")
	_, out, done := h.inBackground("--json", "wait", "--any", long, short[len(short)-8:])
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	select {
	case code := <-done:
		require.Equal(t, 3, code, "wait --any exits with the first job's code; stdout %s", out)
	case <-time.After(time.Minute):
		t.Fatal("wait --any did not return after the short job settled")
	}
	var s map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &s))
	require.Equal(t, short, s["id"])
	require.Equal(t, "exited", s["state"])
	require.Equal(t, "running", h.peekState(long))
}

func TestWaitForSeveralJobsExitsWithTheFirstNonZero(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	a := h.start(fixture(t, "exit-with.sh"), "0")
	b := h.start(fixture(t, "exit-with.sh"), "5")
	c := h.start(fixture(t, "exit-with.sh"), "6")
	r := h.bgcmd("--json", "wait", a, b, c)
	require.Equal(t, 5, r.code, r.stderr)
	lines := jsonLines(t, r.stdout)
	require.Len(t, lines, 3)
	for i, id := range []string{a, b, c} {
		require.Equal(t, id, lines[i]["id"])
	}
	r = h.bgcmd("wait", "--until-output", "x", a, b)
	require.Equal(t, 2, r.code, "--until-output takes one id: %s", r.stderr)
	r = h.bgcmd("wait", a, a)
	require.Equal(t, 2, r.code, r.stderr)
}

func TestEventsFollowShowsAJobStartedByAnotherProcess(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	cmd := exec.Command(binary, "--json", "events", "--follow", "--after", "0")
	cmd.Dir, cmd.Env = h.root, h.env
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	id := h.start(fixture(t, "exit-with.sh"), "4")
	lines := make(chan map[string]any, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	var got []map[string]any
	deadline := time.After(time.Minute)
	for len(got) < 2 {
		select {
		case m, ok := <-lines:
			require.True(t, ok, "events --follow ended early")
			got = append(got, m)
		case <-deadline:
			t.Fatalf("events --follow showed %v, not the job's two transitions", got)
		}
	}
	require.Equal(t, id, got[0]["job_id"])
	require.Equal(t, "running", got[0]["to"])
	require.Equal(t, id, got[1]["job_id"])
	require.Equal(t, "running", got[1]["from"])
	require.Equal(t, "exited", got[1]["to"])
	require.EqualValues(t, 4, got[1]["exit_code"])
	require.Equal(t, "default", got[1]["session"])
	// Resuming after the creation gives the settle alone.
	out := h.ok("--json", "events", "--after", fmt.Sprint(got[0]["seq"]))
	rest := jsonLines(t, out)
	require.Len(t, rest, 1)
	require.Equal(t, got[1]["seq"], rest[0]["seq"])
}

// hookPolicy adds an on_settle hook (the test hook script, exiting with
// code) to the home's policy and returns the hook's run log.
func (h *home) hookPolicy(code string) string {
	h.t.Helper()
	dir := h.t.TempDir()
	log := filepath.Join(dir, "runs.log")
	allowed := []string{fixture(h.t, "exit-with.sh"), fixture(h.t, "wait-for-file.sh")}
	quoted, _ := json.Marshal(allowed)
	hook, _ := json.Marshal([]string{fixture(h.t, "on-settle-hook.sh"), log, dir, code})
	h.writePolicy(fmt.Sprintf("allowed_executables = %s\ncwd_root = %q\non_settle = %s\non_settle_timeout = \"30s\"\n",
		quoted, h.root, hook))
	return log
}

func hookLines(t *testing.T, log string) []string {
	b, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestOnSettleRunsOnceEvenWhenReconcileSettlesAKilledSupervisorsJob(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	log := h.hookPolicy("0")
	id := h.start(fixture(t, "wait-for-file.sh"), filepath.Join(h.root, "never"))
	sup := int(h.status(id)["supervisor_pid"].(float64))
	require.NoError(t, syscall.Kill(sup, syscall.SIGKILL))
	eventually(t, "the supervisor to die", func() bool { return syscall.Kill(sup, 0) != nil || isZombie(sup) })
	h.ok("reconcile")
	h.ok("reconcile")
	require.Equal(t, "orphaned", h.peekState(id))
	out := h.ok("sql", "--csv", "SELECT outcome FROM hook_runs WHERE job_id = '"+id+"'")
	require.Contains(t, out, "ok")
	lines := hookLines(t, log)
	require.Len(t, lines, 1, "the hook runs exactly once: %v", lines)
	require.True(t, strings.HasPrefix(lines[0], id+" orphaned "), lines[0])
}

func TestFailingOnSettleHookLeavesTheJobsStateAlone(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	log := h.hookPolicy("9")
	id := h.start(fixture(t, "exit-with.sh"), "0")
	r := h.bgcmd("wait", id)
	require.Equal(t, 0, r.code, r.stderr)
	eventually(t, "the hook to be recorded", func() bool {
		return strings.Contains(h.ok("sql", "--csv", "SELECT outcome FROM hook_runs WHERE job_id = '"+id+"'"), "failed")
	})
	require.Equal(t, "exited", h.peekState(id))
	require.EqualValues(t, 0, h.status(id)["exit_code"])
	require.Len(t, hookLines(t, log), 1)
}

// isZombie reports whether pid is a zombie (dead, not yet reaped).
func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && b[i+2] == 'Z'
}

// orphanWithHook writes a policy whose on_settle hook is hook (bounded by
// timeout), starts a job that runs until the test ends, kills its
// supervisor and returns the job's id once the supervisor is gone: the
// next command that reconciles settles it and sees to its hook.
func (h *home) orphanWithHook(timeout string, hook ...string) string {
	h.t.Helper()
	quoted, _ := json.Marshal([]string{fixture(h.t, "wait-for-file.sh")})
	hookArgv, _ := json.Marshal(hook)
	h.writePolicy(fmt.Sprintf("allowed_executables = %s\ncwd_root = %q\non_settle = %s\non_settle_timeout = %q\n",
		quoted, h.root, hookArgv, timeout))
	id := h.start(fixture(h.t, "wait-for-file.sh"), filepath.Join(h.root, "never"))
	sup := int(h.status(id)["supervisor_pid"].(float64))
	require.NoError(h.t, syscall.Kill(sup, syscall.SIGKILL))
	eventually(h.t, "the supervisor to die", func() bool { return syscall.Kill(sup, 0) != nil || isZombie(sup) })
	return id
}

// TestACommandThatReconcilesDoesNotWaitForAHook: a short command that
// settles a killed supervisor's job (here `bgcmd status`, which
// reconciles first) hands the job's on_settle hook to a detached process
// and returns: the hook, which waits for a file only this test creates
// after the command has returned, is still running then, and runs to its
// end after.
// Before, the command waited for the hook, up to its timeout.
func TestACommandThatReconcilesDoesNotWaitForAHook(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	release := filepath.Join(t.TempDir(), "release")
	id := h.orphanWithHook("30m", fixture(t, "wait-for-file.sh"), release)
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o600) }) // the hook ends with the test
	_, out, done := h.inBackground("status", id)
	select {
	case code := <-done:
		require.Equal(t, 0, code, "status: %s", out)
	case <-time.After(pollDeadline):
		t.Fatal("a command that reconciled an orphan with an on_settle hook waited for the hook")
	}
	require.Contains(t, out.String(), "orphaned")
	hookRun := func() string {
		return h.ok("sql", "--csv", "SELECT claimed_at IS NOT NULL, COALESCE(outcome, '') FROM hook_runs WHERE job_id = '"+id+"'")
	}
	eventually(t, "the hook to be claimed", func() bool { return strings.Contains(hookRun(), "\n1,") })
	require.Contains(t, hookRun(), "\n1,\n", "the hook is still running after the command returned")
	require.NoError(t, os.WriteFile(release, nil, 0o600))
	eventually(t, "the hook to finish", func() bool { return strings.Contains(hookRun(), "\n1,ok") })
	require.Equal(t, "orphaned", h.peekState(id))
}

// TestAHookReconcileRunsLeavesNothingRunning: the CLI that reconciles a
// killed supervisor's job hands its on_settle hook to a detached
// supervisor, which kills what the hook left in a session of its own
// (setsid) once the hook has ended.
func TestAHookReconcileRunsLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	dir := t.TempDir()
	id := h.orphanWithHook("30s", fixture(t, "on-settle-escape.sh"), dir)
	h.ok("reconcile")
	require.Equal(t, "orphaned", h.peekState(id))
	eventually(t, "the hook to finish", func() bool {
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
	eventually(t, "the hook's setsid descendant to be killed", func() bool { return !sleeper() })
}
