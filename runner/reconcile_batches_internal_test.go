package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// TestReconcileBatchesJudgeWhatChangedUnderTheLock: a reconcile lists the
// running jobs, then, under its lock, reads only their supervisors again.
// Of three batches of orphans listed with a dead supervisor, one job has
// settled since, one has been taken over by a live supervisor and one by
// another dead one. The first is left alone, the second is spared, the
// third is settled with the rest, and every settled job keeps its own
// output, banked in its batch before that batch's settle.
func TestReconcileBatchesJudgeWhatChangedUnderTheLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := newOrphan(t, jobstore.Options{})
	st, r := o.st, o.r
	dead := o.job.SupervisorPID
	jobs := []*bgcmd.Job{o.job}
	for len(jobs) < 2*reconcileBatchSize+3 {
		j := &bgcmd.Job{Argv: []string{"/usr/bin/env"}, Exe: "/usr/bin/env", Cwd: "/",
			SupervisorPID: dead, Timeout: o.job.Timeout}
		require.NoError(t, st.Create(ctx, j))
		require.NoError(t, os.MkdirAll(r.jobDir(j.ID), 0o700))
		jobs = append(jobs, j)
	}
	for i, j := range jobs {
		require.NoError(t, os.WriteFile(filepath.Join(r.jobDir(j.ID), "stdout.log"), fmt.Appendf(nil, "job %d\n", i), 0o600))
	}
	listed, err := st.RunningOnHost(ctx)
	require.NoError(t, err)
	require.Len(t, listed, len(jobs))

	// After the listing, before the lock.
	settled, live, moved := jobs[10], jobs[reconcileBatchSize+10], jobs[2*reconcileBatchSize+1]
	_, err = st.Settle(ctx, jobstore.SettleParams{ID: settled.ID, To: bgcmd.StateExited, ExitCode: new(int)})
	require.NoError(t, err)
	require.NoError(t, st.Claim(ctx, jobstore.ClaimParams{ID: live.ID, SupervisorPID: r.selfPID,
		SupervisorStart: r.selfTime, FromPID: dead}))
	other := exec.Command("/bin/true")
	require.NoError(t, other.Run())
	require.NoError(t, st.Claim(ctx, jobstore.ClaimParams{ID: moved.ID, SupervisorPID: other.Process.Pid,
		SupervisorStart: 1, FromPID: dead}))

	rep := &ReconcileReport{}
	require.Empty(t, r.reconcileDead(ctx, listed, rep))
	pendingHooks.Wait() // the settled jobs' directories go in the background
	require.Equal(t, ReconcileReport{Alive: 1, Lost: 1, Orphaned: len(jobs) - 2}, *rep)

	for i, j := range jobs {
		got, err := st.Get(ctx, j.ID)
		require.NoError(t, err)
		switch j {
		case settled:
			require.Equal(t, bgcmd.StateExited, got.State, "settled before the lock: left as it was")
			continue
		case live:
			require.Equal(t, bgcmd.StateRunning, got.State, "a live supervisor took it over: spared")
			require.Equal(t, r.selfPID, got.SupervisorPID)
			require.DirExists(t, r.jobDir(j.ID))
			continue
		}
		require.Equal(t, bgcmd.StateOrphaned, got.State, "job %d", i)
		require.NoDirExists(t, r.jobDir(j.ID))
		res, err := r.ReadOutput(ctx, j.ID, bgcmd.Stdout, pageAll())
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("job %d\n", i), res.Text, "job %d keeps its own output", i)
	}
	got, err := st.Get(ctx, moved.ID)
	require.NoError(t, err)
	require.Contains(t, got.Error, fmt.Sprintf("pid %d", other.Process.Pid),
		"the job taken over by another dead supervisor is judged by that one")
}
