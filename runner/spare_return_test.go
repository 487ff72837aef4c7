package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// TestAReturnedSupervisorGivesTheNextJobNothingOfThePrevious: a supervisor
// that served a job (with a secret in its environment, a directory of its
// own, a descriptor it opened and a process it left in the background)
// and came back runs the next job exactly as a new supervisor would: in
// that job's directory, with that job's environment, descriptors 0 to 2
// only, and none of the first job's.
func TestAReturnedSupervisorGivesTheNextJobNothingOfThePrevious(t *testing.T) {
	t.Parallel()
	e := newModeEnv(t, "reused")
	sup := runner.SparePID(e.r)
	sub := filepath.Join(e.root, "next")
	require.NoError(t, os.Mkdir(sub, 0o700))
	j := e.start([]string{"/bin/sh", "-c", `pwd; echo "B=$B"; env; ls /proc/self/fd; [ -e kept ] && echo kept-here`},
		runner.StartOptions{Cwd: sub, Env: map[string]string{"B": "2"}})
	require.Equal(t, sup, j.SupervisorPID, "the returned supervisor took the job")
	s := e.await(j.ID)
	require.Equal(t, bgcmd.StateExited, s.State, "error: %s", s.Error)
	out := e.output(j.ID, bgcmd.Stdout)
	lines := strings.Split(out, "\n")
	require.Equal(t, []string{sub, "B=2"}, lines[:2])
	require.NotContains(t, out, warmUpVar)
	require.NotContains(t, out, warmUpSecret)
	require.NotContains(t, out, warmUpDir)
	require.NotContains(t, out, "kept-here")
	require.NotContains(t, out, inheritedSecret)
	// ls lists its own descriptors: 0, 1, 2 and the directory it reads.
	var fds []string
	for _, l := range lines[2:] {
		if _, err := strconv.Atoi(l); err == nil {
			fds = append(fds, l)
		}
	}
	require.Equal(t, []string{"0", "1", "2", "3"}, fds, "output:\n%s", out)
}

// TestAReturnedSupervisorHoldsNothingOfItsJobs: job after job, a
// supervisor that comes back holds the same descriptors (none of a job's
// logs, pipes or directory), no child process and the root as its working
// directory, as when it first came back.
func TestAReturnedSupervisorHoldsNothingOfItsJobs(t *testing.T) {
	t.Parallel()
	e := newModeEnv(t, "reused")
	sup := runner.SparePID(e.r)
	first, firstTargets := openFDs(t, sup), fdTargets(sup)
	for i := range 3 {
		j := e.start([]string{fixture(t, "print-bytes.sh"), "100000"}, runner.StartOptions{})
		require.Equal(t, sup, j.SupervisorPID, "job %d", i)
		s := e.await(j.ID)
		require.Equal(t, bgcmd.StateExited, s.State, "error: %s", s.Error)
		waitFor(t, "the supervisor to come back", func() bool { return runner.SparePID(e.r) == sup })
		require.Equal(t, first, openFDs(t, sup), "after job %d: first %v, now %v", i, firstTargets, fdTargets(sup))
		children, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(sup), "task", strconv.Itoa(sup), "children"))
		require.NoError(t, err)
		require.Empty(t, strings.TrimSpace(string(children)), "after job %d", i)
		cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(sup), "cwd"))
		require.NoError(t, err)
		require.Equal(t, "/", cwd)
	}
}

// TestASupervisorAskedBackExitsWhenItsRunnerClosed: a runner closed while
// a job runs under a supervisor it asked back lets that supervisor go: the
// job runs on and settles, and its supervisor then exits instead of
// waiting for a host that is gone.
func TestASupervisorAskedBackExitsWhenItsRunnerClosed(t *testing.T) {
	t.Parallel()
	e := newModeEnv(t, "spare")
	gofile := filepath.Join(t.TempDir(), "go")
	j := e.start([]string{fixture(t, "wait-for-file.sh"), gofile, "0"}, runner.StartOptions{})
	require.NoError(t, e.r.Close(context.Background()))
	require.True(t, processAlive(j.SupervisorPID), "the job's supervisor outlives its runner")
	require.NoError(t, os.WriteFile(gofile, nil, 0o600))
	waitFor(t, "the job to settle", func() bool {
		rec, err := e.store.Get(context.Background(), j.ID)
		require.NoError(t, err)
		return rec.State.Settled()
	})
	waitFor(t, "its supervisor to exit", func() bool { return !processAlive(j.SupervisorPID) })
}
