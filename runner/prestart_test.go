package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// prestart starts a supervisor for the store at path, as bgcmd run does
// before it opens its own.
func (e *env) prestart(path string) (*runner.Prestarted, int) {
	e.t.Helper()
	ps, err := runner.Prestart(os.Args[0], jobstore.Options{Path: path,
		Host: e.store.Host(), HostID: e.store.HostID()})
	require.NoError(e.t, err)
	pid := runner.PrestartedPID(ps)
	require.NotZero(e.t, pid)
	return ps, pid
}

// TestPrestartedSupervisorRunsTheFirstJob: a supervisor started before the
// runner's store was open takes the runner's first detached start, named
// in the job's row from its creation, and runs it to its true exit.
func TestPrestartedSupervisorRunsTheFirstJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	ps, pid := e.prestart(filepath.Join(e.home, "bgcmd.db"))
	r, err := runner.New(context.Background(), runner.Options{Store: e.store, Home: e.home, Policy: e.policy,
		Detached: true, Binary: os.Args[0], SkipReconcile: true, Prestarted: ps})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(context.Background()) })
	e.r = r

	j := e.start([]string{fixture(t, "exit-with.sh"), "3"}, runner.StartOptions{})
	require.Equal(t, pid, j.SupervisorPID, "the prestarted supervisor took the job")
	require.NotZero(t, j.PID)
	require.NotNil(t, j.StartedAt)
	rec, err := e.store.Get(context.Background(), j.ID)
	require.NoError(t, err)
	require.Equal(t, j.PID, rec.PID, "Start returned the row as the supervisor wrote it")
	require.Equal(t, pid, rec.SupervisorPID)
	s := e.await(j.ID)
	require.Equal(t, bgcmd.StateExited, s.State, "error: %s", s.Error)
	require.Equal(t, 3, *s.ExitCode)
}

// TestPrestartedSupervisorOfAnotherStoreIsNotUsed: a supervisor started
// for another database never gets this runner's job: it is let go, and
// the job runs under a supervisor started for it.
func TestPrestartedSupervisorOfAnotherStoreIsNotUsed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	ps, pid := e.prestart(filepath.Join(t.TempDir(), "other.db"))
	r, err := runner.New(context.Background(), runner.Options{Store: e.store, Home: e.home, Policy: e.policy,
		Detached: true, Binary: os.Args[0], SkipReconcile: true, Prestarted: ps})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(context.Background()) })
	e.r = r
	waitFor(t, "the other store's supervisor to exit", func() bool { return !processAlive(pid) })

	j := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
	require.NotEqual(t, pid, j.SupervisorPID)
	s := e.await(j.ID)
	require.Equal(t, bgcmd.StateExited, s.State, "error: %s", s.Error)
}
