package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

// TestWaitNoticesDeadSupervisor: a `bgcmd wait` already waiting when the
// job's supervisor is SIGKILLed must not wait forever for a settle nobody
// will write: the job is settled as orphaned (reconcile) and wait returns
// with its status, without another bgcmd command having to run.
func TestWaitNoticesDeadSupervisor(t *testing.T) {
	h := newHome(t, "", defaultPolicy(t))
	t.Cleanup(h.killAll)
	res := h.mustRun(0, "--json", "run", "--", fixture(t, "slow-lines.sh"), "100000", "0.05")
	id := statusOf(t, res).ID
	st := h.openRO()
	defer st.Close()
	rec, err := st.Get(context.Background(), id)
	require.NoError(t, err)

	// Start waiting (no bound of its own), and let it get to its wait: the
	// job directory's watch is in place once it holds an inotify descriptor.
	cmd := h.command(context.Background(), "--json", "wait", id)
	out := &cliBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	eventually(t, 30*time.Second, "bgcmd wait to watch the job", func() (bool, string) {
		return watchesInotify(cmd.Process.Pid), "no inotify descriptor yet"
	})

	require.True(t, sigkill(rec.SupervisorPID, rec.SupervisorStart), "kill the supervisor")
	const bound = time.Minute // the supervisor is never coming back: any bound proves it
	select {
	case err = <-waited:
	case <-time.After(bound):
		t.Fatalf("bgcmd wait was still waiting %s after the supervisor died (output %q)", bound, out.String())
	}
	require.Error(t, err, "wait exits 126 for an orphaned job")
	rec, err = st.Get(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateOrphaned, rec.State)
}

// watchesInotify reports whether pid holds an inotify descriptor.
func watchesInotify(pid int) bool {
	dir := filepath.Join("/proc", itoa(pid), "fd")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && l == "anon_inode:inotify" {
			return true
		}
	}
	return false
}

// killReconcilerMidSettle starts a job, SIGKILLs its supervisor, and then
// SIGKILLs a `bgcmd reconcile` in the middle of reconciling it: inside
// reconcile (holding jobs/.reconcile.lock), while it waits for the database
// write lock another process holds. It returns the job's id. The exact
// crash after banking is pinned down by the runner's own
// TestReconcileCrashAfterBankingKeepsTheOutput; this one drives the real
// binary.
func killReconcilerMidSettle(t *testing.T, h *home) string {
	t.Helper()
	res := h.mustRun(0, "--json", "run", "--", fixture(t, "slow-lines.sh"), "100000", "0.05")
	id := statusOf(t, res).ID
	st := h.openRO()
	defer st.Close()
	logPath := filepath.Join(h.dir, "jobs", id, "stdout.log")
	eventually(t, 30*time.Second, "the job to print", func() (bool, string) {
		fi, err := os.Stat(logPath)
		return err == nil && fi.Size() >= 14, fmt.Sprint(err)
	})
	rec, err := st.Get(context.Background(), id)
	require.NoError(t, err)
	require.True(t, sigkill(rec.SupervisorPID, rec.SupervisorStart), "kill the supervisor")
	eventually(t, 10*time.Second, "the supervisor to die", func() (bool, string) {
		return !isProcess(rec.SupervisorPID, rec.SupervisorStart), ""
	})
	lock := holdLockUntilReleased(t, h)
	cmd := h.command(context.Background(), "reconcile")
	require.NoError(t, cmd.Start())
	eventually(t, 30*time.Second, "the reconciler to be reconciling the job", func() (bool, string) {
		return holdsFile(cmd.Process.Pid, filepath.Join(h.dir, "jobs", ".reconcile.lock")), "lock not held yet"
	})
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	lock.release(t)
	return id
}

// TestReconcilerKilledAfterBanking is the regression test for data loss the
// soak found: a reconciling process (any bgcmd command reconciles when it
// opens the store) that dies after banking an orphaned job's logs but
// before its settle commits leaves the logs moved out of the job directory
// with nothing recording where; the next reconcile then settles the job
// orphaned with no output at all, and gc deletes the banked files as
// strays. The partial output must survive any single crash.
func TestReconcilerKilledAfterBanking(t *testing.T) {
	h := newHome(t, "", defaultPolicy(t))
	t.Cleanup(h.killAll)
	id := killReconcilerMidSettle(t, h)

	// Restart: the next reconcile settles the job with its partial output.
	h.mustRun(0, "reconcile")
	st := h.openRO()
	defer st.Close()
	ctx := context.Background()
	rec, err := st.Get(ctx, id)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateOrphaned, rec.State)
	arts, err := st.Artifacts(ctx, id)
	require.NoError(t, err)
	require.Len(t, arts, 2, "both streams banked after a reconciler crashed mid-way (error %q)", rec.Error)
	h.mustRun(0, "gc", "--min-age", "0s")
	out := h.mustRun(0, "output", id, "--raw")
	require.GreaterOrEqual(t, len(out.stdout), 14, "the partial output printed before the crash")
	require.Equal(t, string(slowLines(len(out.stdout))), string(out.stdout))
}

// holdsFile reports whether pid has path open.
func holdsFile(pid int, path string) bool {
	dir := filepath.Join("/proc", itoa(pid), "fd")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && l == path {
			return true
		}
	}
	return false
}
