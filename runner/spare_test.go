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
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// supervisionModes are the ways a job can be supervised: in a goroutine of
// the host, by a detached supervisor started for it, by the detached
// supervisor a long-lived host keeps ready (Options.Spare), and by one
// that has served another job already and came back (reused).
var supervisionModes = []string{"in-process", "detached", "spare", "reused"}

// newModeEnv is newEnv for one of supervisionModes; in the spare mode its
// runner has a spare supervisor waiting when it returns, in the reused
// mode one that served a job of its own first (see serveWarmUpJob).
func newModeEnv(t *testing.T, mode string) *env {
	t.Helper()
	e := newEnv(t, mode != "in-process")
	if mode == "spare" || mode == "reused" {
		e.r = e.newSpareRunner()
	}
	if mode == "reused" {
		e.serveWarmUpJob()
	}
	return e
}

// Of the job a reused supervisor served first: a variable and its value,
// and its directory, which no later job may see.
const (
	warmUpVar    = "BGCMD_WARMUP_SECRET"
	warmUpSecret = "warm-up-value-5c1e"
	warmUpDir    = "warm-up"
)

// serveWarmUpJob runs a job under the runner's next spare that leaves
// what it can behind (a variable, a directory of its own, output, a
// background process), waits for it to settle and for its supervisor to
// come back as the next spare, and returns that supervisor's pid.
func (e *env) serveWarmUpJob() int {
	e.t.Helper()
	dir := filepath.Join(e.root, warmUpDir)
	require.NoError(e.t, os.MkdirAll(dir, 0o700))
	j := e.start([]string{"/bin/sh", "-c", `echo "$` + warmUpVar + `"; exec 7>kept; (sleep 30 &); exit 0`},
		runner.StartOptions{Cwd: dir, Env: map[string]string{warmUpVar: warmUpSecret}})
	s := e.await(j.ID)
	require.Equal(e.t, bgcmd.StateExited, s.State, "error: %s", s.Error)
	require.Equal(e.t, warmUpSecret+"\n", e.output(j.ID, bgcmd.Stdout))
	waitFor(e.t, "the warm-up job's supervisor to come back", func() bool {
		return runner.SparePID(e.r) == j.SupervisorPID
	})
	return j.SupervisorPID
}

// newSpareRunner makes a detached runner that keeps a spare supervisor and
// waits until the spare is ready.
func (e *env) newSpareRunner() *runner.Runner {
	e.t.Helper()
	r, err := runner.New(context.Background(), runner.Options{Store: e.store, Home: e.home, Policy: e.policy,
		Detached: true, Binary: os.Args[0], Spare: true, SkipReconcile: true})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { r.Close(context.Background()) })
	waitFor(e.t, "the spare supervisor", func() bool { return runner.SparePID(r) != 0 })
	return r
}

// TestSpareSupervisorRunsTheNextJob: the spare a runner keeps takes the
// next job with the job's own directory and environment and nothing of
// its own, and another spare takes its place.
func TestSpareSupervisorRunsTheNextJob(t *testing.T) {
	t.Parallel()
	e := newModeEnv(t, "spare")
	sub := filepath.Join(e.root, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))

	spare := runner.SparePID(e.r)
	gofile := filepath.Join(t.TempDir(), "go")
	j := e.start([]string{"/bin/sh", "-c", `pwd; echo "A=$A"; env | wc -l; while [ ! -e "$1" ]; do sleep 0.05; done`, "sh", gofile},
		runner.StartOptions{Cwd: sub, Env: map[string]string{"A": "1"}})
	require.Equal(t, spare, j.SupervisorPID, "the spare took the job")
	// While the job runs, another spare takes its place.
	waitFor(t, "the next spare", func() bool {
		p := runner.SparePID(e.r)
		return p != 0 && p != spare
	})
	require.NoError(t, os.WriteFile(gofile, nil, 0o600))
	s := e.await(j.ID)
	require.Equal(t, bgcmd.StateExited, s.State, "error: %s", s.Error)
	require.Equal(t, 0, *s.ExitCode)
	lines := strings.Fields(e.output(j.ID, bgcmd.Stdout))
	require.Equal(t, []string{sub, "A=1"}, lines[:2])
	// sh adds PWD, SHLVL and _ of its own; the host's variables (the test
	// process has dozens, and a marker) never reach the job.
	require.NotContains(t, e.output(j.ID, bgcmd.Stdout), inheritedSecret)
}

// TestSpareSupervisorEndsWithItsRunner: closing the runner (or the host
// ending) lets the waiting spare exit without touching the store.
func TestSpareSupervisorEndsWithItsRunner(t *testing.T) {
	t.Parallel()
	e := newModeEnv(t, "spare")
	spare := runner.SparePID(e.r)
	require.True(t, processAlive(spare))
	require.NoError(t, e.r.Close(context.Background()))
	waitFor(t, "the spare to exit", func() bool { return !processAlive(spare) })
	res, err := e.store.List(context.Background(), jobstore.ListParams{})
	require.NoError(t, err)
	require.Empty(t, res.Jobs)
}

// TestClosingWhileTheSpareStartsLeavesNoSupervisor: Close right after New,
// while the first spare is still starting, returns only once that spare
// has been let go and has exited: nothing of the runner's touches the home
// after Close.
func TestClosingWhileTheSpareStartsLeavesNoSupervisor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	r, err := runner.New(context.Background(), runner.Options{Store: e.store, Home: e.home, Policy: e.policy,
		Detached: true, Binary: os.Args[0], Spare: true, SkipReconcile: true})
	require.NoError(t, err)
	require.NoError(t, r.Close(context.Background()))
	spare := runner.LastSpawnedSparePID(r)
	require.NotZero(t, spare, "Close waited for the spare being started")
	require.False(t, processAlive(spare), "the spare exited before Close returned")
}

// TestDeadSpareIsReplacedByAColdSupervisor: a spare that died waiting costs
// the next job nothing: a supervisor is started for it as without spares.
func TestDeadSpareIsReplacedByAColdSupervisor(t *testing.T) {
	t.Parallel()
	startAfterTheSpareDied(t, false)
}

// TestASpareThatDiedUnseenIsReplaced: a spare's death does not always fail
// the write of its job: a fork of the host that runs at the same time (a
// job's, another supervisor's) holds a copy of the spare's socket until it
// execs, and the write lands in the buffer of a socket no one will read.
// The spare says it took the job before doing anything with it; a spare
// that ends without saying so never had it, and a cold supervisor runs the
// job as if there had been no spare.
func TestASpareThatDiedUnseenIsReplaced(t *testing.T) {
	runner.HoldSupervisorPeers(t) // not parallel: it holds every runner's
	for _, storeOpen := range []bool{false, true} {
		t.Run(fmt.Sprintf("store open %v", storeOpen), func(t *testing.T) { startAfterTheSpareDied(t, storeOpen) })
	}
}

// startAfterTheSpareDied kills the spare of a new spare runner (once it
// has its store open, when storeOpen is set) and checks that the next
// job runs, under another supervisor, to its exit status.
func startAfterTheSpareDied(t *testing.T, storeOpen bool) {
	e := newModeEnv(t, "spare")
	spare := runner.SparePID(e.r)
	if storeOpen {
		waitFor(t, "the spare to open the store", func() bool { return holdsOpen(spare, e.store.Path()) })
	}
	require.NoError(t, syscall.Kill(spare, syscall.SIGKILL))
	waitFor(t, "the spare to die", func() bool { return !processAlive(spare) })

	j := e.start([]string{fixture(t, "exit-with.sh"), "3"}, runner.StartOptions{})
	require.NotEqual(t, spare, j.SupervisorPID)
	s := e.await(j.ID)
	require.Equal(t, bgcmd.StateExited, s.State, "error: %s", s.Error)
	require.Equal(t, 3, *s.ExitCode)
}

// holdsOpen reports whether process pid has the file at path open.
func holdsOpen(pid int, path string) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}

// TestARunnerKeepsTwoSparesAndHandsOutTheOldest: a runner with spares has
// two supervisors waiting; a start takes the one started first (the most
// likely to have finished starting). Once the job has settled its
// supervisor is back, first in line, and both places are filled again
// without a process started for it.
func TestARunnerKeepsTwoSparesAndHandsOutTheOldest(t *testing.T) {
	t.Parallel()
	e := newModeEnv(t, "spare")
	waitFor(t, "two spares", func() bool { return runner.SpareCount(e.r) == 2 })
	oldest := runner.SparePID(e.r)
	last := runner.LastSpawnedSparePID(e.r)
	j := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
	require.Equal(t, oldest, j.SupervisorPID, "the oldest spare took the job")
	s := e.await(j.ID)
	require.Equal(t, bgcmd.StateExited, s.State, "error: %s", s.Error)
	waitFor(t, "two spares again", func() bool { return runner.SpareCount(e.r) == 2 })
	require.Equal(t, oldest, runner.SparePID(e.r), "the job's supervisor came back first in line")
	require.Equal(t, last, runner.LastSpawnedSparePID(e.r), "no supervisor was started for the job")
}

// TestSupervisorsOfOverlappingJobsAllComeBack: calls that follow each
// other before a job's supervisor is back take both spares, and a third
// supervisor is started in their place. When the jobs settle, both come
// back and stay beside it, so the next pair of overlapping jobs starts no
// process (where holding two spares would let one go and start another
// for every such pair).
func TestSupervisorsOfOverlappingJobsAllComeBack(t *testing.T) {
	t.Parallel()
	e := newModeEnv(t, "spare")
	waitFor(t, "two spares", func() bool { return runner.SpareCount(e.r) == 2 })
	overlapping := func(gofile string) (first, second *bgcmd.Job) {
		argv := []string{fixture(t, "wait-for-file.sh"), gofile}
		return e.start(argv, runner.StartOptions{}), e.start(argv, runner.StartOptions{})
	}

	gofile := filepath.Join(t.TempDir(), "go")
	j1, j2 := overlapping(gofile)
	waitFor(t, "the spare started in their place", func() bool { return runner.SpareCount(e.r) == 1 })
	third := runner.SparePID(e.r)
	require.NotContains(t, []int{j1.SupervisorPID, j2.SupervisorPID}, third)
	require.NoError(t, os.WriteFile(gofile, nil, 0o600))
	for _, j := range []*bgcmd.Job{j1, j2} {
		s := e.await(j.ID)
		require.Equal(t, bgcmd.StateExited, s.State, "error: %s", s.Error)
	}
	waitFor(t, "both supervisors back beside the third", func() bool { return runner.SpareCount(e.r) == 3 })

	last := runner.LastSpawnedSparePID(e.r)
	gofile = filepath.Join(t.TempDir(), "go")
	j3, j4 := overlapping(gofile)
	require.ElementsMatch(t, []int{j1.SupervisorPID, j2.SupervisorPID}, []int{j3.SupervisorPID, j4.SupervisorPID},
		"the supervisors that came back took the jobs")
	require.Equal(t, 1, runner.SpareCount(e.r))
	require.Equal(t, third, runner.SparePID(e.r))
	require.Equal(t, last, runner.LastSpawnedSparePID(e.r), "no supervisor was started for the second pair")
	require.NoError(t, os.WriteFile(gofile, nil, 0o600))
	for _, j := range []*bgcmd.Job{j3, j4} {
		s := e.await(j.ID)
		require.Equal(t, bgcmd.StateExited, s.State, "error: %s", s.Error)
	}
}
