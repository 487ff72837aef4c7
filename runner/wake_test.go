package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// inotifyInstances counts the inotify instances process pid holds.
func inotifyInstances(t *testing.T, pid int) int {
	t.Helper()
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && strings.Contains(target, "inotify") {
			n++
		}
	}
	return n
}

// TestARunningJobsSupervisorHoldsNoInotifyInstance is the exploit of a
// per-user limit: inotify instances are few for all of a user's programs
// (128 by default), and a supervisor that held one per running job let
// 128 jobs take every one, so that the user's editor or file watcher got
// none. A detached supervisor waits for kill requests on its job's wake
// socket instead, and the request still stops the job at once.
func TestARunningJobsSupervisorHoldsNoInotifyInstance(t *testing.T) {
	t.Parallel()
	e, j, supervisor := waitingDetachedJob(t)
	require.Zero(t, inotifyInstances(t, supervisor), "the supervisor %d holds an inotify instance", supervisor)
	requireKillStops(t, e, j)
}

// waitingDetachedJob starts a job that waits until the test ends, under
// a detached supervisor, and returns it once it waits, with its env and
// its supervisor's pid.
func waitingDetachedJob(t *testing.T) (*env, *bgcmd.Job, int) {
	t.Helper()
	e := newEnv(t, true)
	gate := filepath.Join(e.root, "gate")
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600) })
	j := e.start([]string{fixture(t, "wait-for-file.sh"), gate}, runner.StartOptions{})
	require.Equal(t, bgcmd.StateRunning, j.State, j.Error)
	waitFor(t, "the job to wait", func() bool { return strings.Contains(e.output(j.ID, bgcmd.Stdout), "waiting\n") })
	rec, err := e.store.Get(context.Background(), j.ID)
	require.NoError(t, err)
	return e, j, rec.SupervisorPID
}

// requireKillStops kills j, which waits: its supervisor stops it at once.
func requireKillStops(t *testing.T, e *env, j *bgcmd.Job) {
	t.Helper()
	s, err := e.r.Kill(context.Background(), j.ID, syscall.SIGTERM)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateKilled, s.State, "%+v", s)
}

// TestAKillFromAnotherRunnerWakesTheSupervisorAtOnce: a kill requested
// through another runner on the same home (another process, as far as the
// job's supervisor knows) wakes the supervisor by the job's wake socket:
// with the supervisor's poll of its row an hour apart, nothing else could
// deliver it before the wait below gives up.
func TestAKillFromAnotherRunnerWakesTheSupervisorAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	runner.SetPolls(e.r, time.Hour, time.Hour)
	other := e.newRunner(false)
	gate := filepath.Join(e.root, "gate")
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600) })
	j := e.start([]string{fixture(t, "wait-for-file.sh"), gate}, runner.StartOptions{})
	waitFor(t, "the job to wait", func() bool { return strings.Contains(e.output(j.ID, bgcmd.Stdout), "waiting\n") })

	_, err := other.RequestKill(context.Background(), j.ID, syscall.SIGTERM)
	require.NoError(t, err)
	s, err := e.r.Await(context.Background(), j.ID, pollDeadline)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateKilled, s.State, "%+v", s)
	require.Equal(t, "SIGTERM", s.Signal)
}

// TestPruneRemovesTheWakeSocketsOfDeadKeepers: a keeper that ends removes
// its job's wake socket; one that died leaves it, and pruning the job
// removes it with the job's other files.
func TestPruneRemovesTheWakeSocketsOfDeadKeepers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	j := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
	e.await(j.ID)
	wake := filepath.Join(e.home, "wake")
	left, err := os.ReadDir(wake)
	require.NoError(t, err, "the job's supervisor listened in the wake folder")
	require.Len(t, left, 1, "a supervisor that ended left its socket")
	own := left[0].Name()
	require.True(t, strings.HasPrefix(own, "p-"+e.store.HostID()+"-"), "only this process's socket is left: %s", own)

	stale := filepath.Join(wake, j.ID) // as a keeper that was killed leaves it
	require.NoError(t, os.WriteFile(stale, nil, 0o600))
	other := filepath.Join(wake, "not-a-pruned-job")
	require.NoError(t, os.WriteFile(other, nil, 0o600))
	// A process of this host that died with its runner open left its
	// socket; another host's is that host's business.
	dead := filepath.Join(wake, runner.ProcWakeName(e.store.HostID(), os.Getpid(), runner.ProcessStart(os.Getpid())+1))
	require.NoError(t, os.WriteFile(dead, nil, 0o600))
	foreign := filepath.Join(wake, runner.ProcWakeName(jobstore.NewID(), os.Getpid(), runner.ProcessStart(os.Getpid())+1))
	require.NoError(t, os.WriteFile(foreign, nil, 0o600))
	_, err = e.r.Prune(context.Background(), jobstore.PruneParams{FinishedBefore: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	require.NoFileExists(t, stale)
	require.NoFileExists(t, dead, "a dead process's socket goes")
	require.FileExists(t, other, "only the pruned jobs' sockets go")
	require.FileExists(t, foreign, "another host's process is not this host's to judge")
	require.FileExists(t, filepath.Join(wake, own), "a live process keeps its socket")
}

// TestInProcessJobsShareTheirProcesssWakeSocket: the in-process jobs of
// every runner of a process wait on one wake socket, the process's, and a
// kill requested through another runner still reaches each at once (the
// polls of the rows an hour apart). The socket goes with the last runner.
func TestInProcessJobsShareTheirProcesssWakeSocket(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	second := e.newRunner(false)
	killer := e.newRunner(false)
	gate := filepath.Join(e.root, "gate")
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600) })
	var jobs []*bgcmd.Job
	for _, r := range []*runner.Runner{e.r, second} {
		runner.SetPolls(r, time.Hour, time.Hour)
		j, err := r.Start(context.Background(), []string{fixture(t, "wait-for-file.sh"), gate}, runner.StartOptions{})
		require.NoError(t, err)
		waitFor(t, "the job to wait", func() bool { return strings.Contains(e.output(j.ID, bgcmd.Stdout), "waiting\n") })
		jobs = append(jobs, j)
	}
	wake := filepath.Join(e.home, "wake")
	names, err := os.ReadDir(wake)
	require.NoError(t, err)
	require.Len(t, names, 1, "one socket for the process")
	require.Equal(t, runner.ProcWakeName(e.store.HostID(), os.Getpid(), runner.ProcessStart(os.Getpid())), names[0].Name())

	for i, r := range []*runner.Runner{e.r, second} {
		_, err := killer.RequestKill(context.Background(), jobs[i].ID, syscall.SIGTERM)
		require.NoError(t, err)
		s, err := r.Await(context.Background(), jobs[i].ID, pollDeadline)
		require.NoError(t, err)
		require.Equal(t, bgcmd.StateKilled, s.State, "%+v", s)
	}
	for _, r := range []*runner.Runner{second, killer} {
		require.NoError(t, r.Close(context.Background()))
	}
	require.FileExists(t, filepath.Join(wake, names[0].Name()), "a runner still holds it")
	require.NoError(t, e.r.Close(context.Background()))
	require.NoFileExists(t, filepath.Join(wake, names[0].Name()), "the last runner closed it")
}

// pollerFiles returns what the descriptors registered in process pid's
// epoll instances are (the targets of their /proc links).
func pollerFiles(t *testing.T, pid int) []string {
	t.Helper()
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	fds, err := os.ReadDir(filepath.Join(dir, "fd"))
	require.NoError(t, err)
	var out []string
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join(dir, "fd", fd.Name())); target != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile(filepath.Join(dir, "fdinfo", fd.Name()))
		require.NoError(t, err)
		for _, line := range strings.Split(string(info), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "tfd:" {
				target, _ := os.Readlink(filepath.Join(dir, "fd", f[1]))
				out = append(out, target)
			}
		}
	}
	return out
}

// TestADetachedSupervisorWaitsOnNothingInThePoller: a detached
// supervisor reads its job's pipes and its wake socket on threads of its
// own, so nothing of it waits in Go's poller while the job runs (with one
// waiter there, every idle thread polled it first: thousands of
// epoll_pwait calls per GiB of output). The wake socket still stops the
// job at once, and the output is all there.
func TestADetachedSupervisorWaitsOnNothingInThePoller(t *testing.T) {
	t.Parallel()
	e, j, supervisor := waitingDetachedJob(t)
	for _, f := range pollerFiles(t, supervisor) {
		require.False(t, strings.HasPrefix(f, "pipe:") || strings.HasPrefix(f, "socket:"),
			"supervisor %d waits on %s in its poller", supervisor, f)
	}
	requireKillStops(t, e, j)
	require.Equal(t, "waiting\n", e.output(j.ID, bgcmd.Stdout))
}
