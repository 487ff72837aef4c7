//go:build linux

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
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// isSleep says whether pid is a live "sleep arg" process.
func isSleep(pid int, arg string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return err == nil && processAlive(pid) && string(b) == "sleep\x00"+arg+"\x00"
}

// sleeperPid returns the pid of a live "sleep arg" process, or 0.
func sleeperPid(arg string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && isSleep(pid, arg) {
			return pid
		}
	}
	return 0
}

// killSleeperAtEnd kills the "sleep arg" process, if any is left, when t
// ends.
func killSleeperAtEnd(t *testing.T, arg string) {
	t.Cleanup(func() {
		if pid := sleeperPid(arg); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// procState is the state letter /proc shows for pid, or 0.
func procState(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2]
	}
	return 0
}

// A job runs as its supervisor's child and as the same user, so it can
// stop its supervisor (SIGSTOP), which then enforces neither the job's
// timeout nor a kill request. Reconcile took a stopped supervisor for
// alive, and the job ran on without bound (still running 13 s into a 2 s
// timeout, in the attack). Now a stopped supervisor is not counted as
// supervising: the next reconcile takes the job over, ends the supervisor
// and kills what is left of the job.
//
// The job may also stop its supervisor before the supervisor has said it
// runs (on a busy machine, often): the start then failed after its 30 s
// wait, on record as start_failed, and the job ran on unbounded, stopped
// supervisor and all, under a row nothing reconciles. Now the start that
// gives up on a silent supervisor ends it with everything below it.
func TestAJobThatStopsItsSupervisorIsEndedByTheNextReconcile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	const tag = "4243"
	killSleeperAtEnd(t, tag)
	j, err := e.r.Start(context.Background(), []string{"/bin/sh", "-c", "kill -STOP $PPID; exec sleep " + tag},
		runner.StartOptions{Timeout: 10 * time.Minute})
	if err != nil {
		// Stopped before its report: the start failed, and nothing of the
		// job may be left.
		require.ErrorContains(t, err, "did not report")
		waitFor(t, "the job's sleeper to be killed", func() bool { return sleeperPid(tag) == 0 })
		list, lerr := e.store.List(context.Background(), jobstore.ListParams{})
		require.NoError(t, lerr)
		require.Len(t, list.Jobs, 1)
		require.Equal(t, bgcmd.StateStartFailed, list.Jobs[0].State)
		require.False(t, processAlive(list.Jobs[0].SupervisorPID), "the silent supervisor was ended")
		return
	}
	t.Cleanup(func() { _ = syscall.Kill(j.SupervisorPID, syscall.SIGKILL) })
	waitFor(t, "the job to stop its supervisor", func() bool { return procState(j.SupervisorPID) == 'T' })
	waitFor(t, "the job's sleeper", func() bool { return sleeperPid(tag) != 0 })

	rep, err := e.r.Reconcile(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, rep.Orphaned, "%+v", *rep)
	rec, err := e.store.Get(context.Background(), j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateOrphaned, rec.State)
	waitFor(t, "the job's sleeper to be killed", func() bool { return sleeperPid(tag) == 0 })
	waitFor(t, "the stopped supervisor to end", func() bool { return !processAlive(j.SupervisorPID) })
}

// A job can also write the exit record its dead supervisor would have left
// (it knows its job directory) and kill that supervisor: reconcile then
// takes the record, which bgcmd cannot tell from its own, as the job's
// status (the README says what a job of the same user can forge). But it
// left the job running, past its settle and its timeout. Now reconcile
// kills what is left of the job on that path too.
func TestAReconcileFromAnExitRecordLeavesNothingOfTheJobRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	const tag = "4245"
	killSleeperAtEnd(t, tag)
	script := `d=$(dirname "$(readlink /proc/$PPID/fd/1)")
printf '{"job_id":"%s","state":"exited","exit_code":0,"finished_at":"2025-01-01T00:00:00Z"}' "$(basename "$d")" > "$d/exit.json"
kill -KILL $PPID
exec sleep ` + tag
	j := e.start([]string{"/bin/sh", "-c", script}, runner.StartOptions{Timeout: 10 * time.Minute})
	waitFor(t, "the supervisor to die", func() bool { return !processAlive(j.SupervisorPID) })
	waitFor(t, "the job's sleeper", func() bool { return sleeperPid(tag) != 0 })
	rep, err := e.r.Reconcile(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, rep.FromExitRecord, "%+v", *rep)
	waitFor(t, "the job's sleeper to be killed", func() bool { return sleeperPid(tag) == 0 })
}
