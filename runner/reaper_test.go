package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// parentOf reads pid's parent from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	require.NoError(t, err)
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	ppid, err := strconv.Atoi(f[1])
	require.NoError(t, err)
	return ppid
}

// requireReaper checks that pid is a reaper process (the test binary
// re-executed with runner.ReapCommand) whose parent is this host.
func requireReaper(t *testing.T, pid int) {
	t.Helper()
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	require.NoError(t, err)
	require.Equal(t, runner.ReapCommand, strings.Split(string(cmdline), "\x00")[1], "pid %d is no reaper", pid)
	require.Equal(t, os.Getpid(), parentOf(t, pid), "the reaper is this host's child")
}

// sessionLeaders lists the pids among marked(marker) that lead their own
// session: the descendants that escaped with setsid (the script's own
// short-lived children stay in its session).
func sessionLeaders(t *testing.T, marker string) []int {
	t.Helper()
	var out []int
	for _, pid := range marked(marker) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 3 && f[3] == strconv.Itoa(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// reaperOf runs print-ppid.sh in process and returns the pid it printed:
// the reaper that started it.
func reaperOf(t *testing.T, e *env) int {
	t.Helper()
	j := e.start([]string{fixture(t, "print-ppid.sh")}, runner.StartOptions{})
	s := e.await(j.ID)
	require.Equal(t, bgcmd.StateExited, s.State, s.Error)
	require.Equal(t, 0, *s.ExitCode)
	pid, err := strconv.Atoi(strings.TrimSpace(e.output(j.ID, bgcmd.Stdout)))
	require.NoError(t, err)
	return pid
}

// TestInProcessJobsReuseALongLivedReaper: one job after another runs
// under the same reaper process, started by this host (not one process
// per job), and Close stops it: it is gone, not even a zombie.
func TestInProcessJobsReuseALongLivedReaper(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, fixture(t, "print-ppid.sh"))
	first := reaperOf(t, e)
	requireReaper(t, first)
	for range 3 {
		require.Equal(t, first, reaperOf(t, e), "a later job ran under another reaper")
	}
	requireReaper(t, first) // still there, waiting for the next job
	require.NoError(t, e.r.Close(context.Background()))
	require.False(t, present(first), "the reaper %d outlived Close", first)
}

// TestAKilledReaperSettlesItsJobAndIsReplaced: when a job's reaper is
// killed (SIGKILL, so it reports nothing), the host sees its socket close:
// it kills the job's process group at once and settles the job as exited
// with no exit status and an error naming the reaper; the next job runs
// under a new reaper, as it does when a reaper dies between jobs.
func TestAKilledReaperSettlesItsJobAndIsReplaced(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.policy.AllowedExecutables = append(e.policy.AllowedExecutables,
		fixture(t, "escape.sh"), fixture(t, "print-ppid.sh"))
	marker := fmt.Sprintf("%d-reaper-killed", os.Getpid())
	j := e.start([]string{fixture(t, "escape.sh"), "doublefork", filepath.Join(e.root, "never")},
		runner.StartOptions{Env: map[string]string{"PATH": os.Getenv("PATH"), containMarker: marker}})
	require.Equal(t, bgcmd.StateRunning, j.State, j.Error)
	waitFor(t, "ready", func() bool { return strings.Contains(e.output(j.ID, bgcmd.Stdout), "ready\n") })
	waitFor(t, "the orphan", func() bool { return len(marked(marker)) >= 2 })
	reaper := parentOf(t, j.PID)
	requireReaper(t, reaper)

	require.NoError(t, syscall.Kill(reaper, syscall.SIGKILL))
	s := e.await(j.ID)
	require.Equal(t, bgcmd.StateExited, s.State)
	require.Nil(t, s.ExitCode, "no exit status is known")
	require.Empty(t, s.Signal)
	require.Contains(t, s.Error, fmt.Sprintf("reaper process %d", reaper))
	require.Contains(t, s.Error, "killed the job's process group")
	require.Empty(t, marked(marker), "the job's processes outlived its settle")
	require.False(t, present(reaper), "the dead reaper was not waited for")

	next := reaperOf(t, e)
	require.NotEqual(t, reaper, next)
	requireReaper(t, next)

	// One that died while it waited for a job is replaced too. (The next
	// start is made once it is gone: a reaper killed while a request is on
	// its way may have started the job, so that start fails rather than
	// risk running the command twice.)
	require.NoError(t, syscall.Kill(next, syscall.SIGKILL))
	waitFor(t, "the idle reaper to be gone", func() bool { return !present(next) })
	third := reaperOf(t, e)
	require.NotEqual(t, next, third)
	requireReaper(t, third)
}

// TestConcurrentJobsKeepTheirOwnDescendants: two jobs run at once, each
// leaving a descendant in a new session; when the first ends, only its
// own descendants are killed, and the other job's stay until it ends.
func TestConcurrentJobsKeepTheirOwnDescendants(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, fixture(t, "escape.sh"))
	type job struct {
		j      *bgcmd.Job
		marker string
		gofile string
	}
	var jobs []job
	for i, kind := range []string{"setsid-f", "setsid"} {
		marker := fmt.Sprintf("%d-concurrent-%d", os.Getpid(), i)
		gofile := filepath.Join(e.root, fmt.Sprintf("go-%d", i))
		j := e.start([]string{fixture(t, "escape.sh"), kind, gofile},
			runner.StartOptions{Env: map[string]string{"PATH": os.Getenv("PATH"), containMarker: marker}})
		require.Equal(t, bgcmd.StateRunning, j.State, j.Error)
		jobs = append(jobs, job{j, marker, gofile})
	}
	for _, x := range jobs {
		waitFor(t, "ready", func() bool { return strings.Contains(e.output(x.j.ID, bgcmd.Stdout), "ready\n") })
		waitFor(t, "the escaped descendant", func() bool { return len(sessionLeaders(t, x.marker)) >= 1 })
	}
	require.NotEqual(t, parentOf(t, jobs[0].j.PID), parentOf(t, jobs[1].j.PID), "two running jobs share a reaper")
	escaped := sessionLeaders(t, jobs[1].marker)

	require.NoError(t, os.WriteFile(jobs[0].gofile, nil, 0o600))
	require.Equal(t, bgcmd.StateExited, e.await(jobs[0].j.ID).State)
	require.Empty(t, marked(jobs[0].marker), "the first job's descendants outlived it")
	for _, pid := range escaped {
		require.True(t, processAlive(pid), "pid %d of the running job was killed with the other job", pid)
	}
	require.True(t, processAlive(jobs[1].j.PID), "the running job was killed with the other job")

	require.NoError(t, os.WriteFile(jobs[1].gofile, nil, 0o600))
	require.Equal(t, bgcmd.StateExited, e.await(jobs[1].j.ID).State)
	require.Empty(t, marked(jobs[1].marker))
}

// TestAStartErrorUnderTheReaperKeepsItsCause: the reaper sends back the
// errno of a failed start, so the job's error says why as before (here: a
// file that is not executable), and the reaper serves the next job.
func TestAStartErrorUnderTheReaperKeepsItsCause(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	notExec := filepath.Join(t.TempDir(), "tool")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\nexit 0\n"), 0o644))
	e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, notExec, fixture(t, "print-ppid.sh"))
	before := reaperOf(t, e)
	j := e.start([]string{notExec}, runner.StartOptions{})
	require.Equal(t, bgcmd.StateStartFailed, j.State)
	require.Contains(t, j.Error, "not executable (permission denied)")
	require.Equal(t, before, reaperOf(t, e), "the reaper was replaced after a start error")
}
