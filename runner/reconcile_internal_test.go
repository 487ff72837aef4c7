package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// TestReconcileCrashAfterBankingKeepsTheOutput plays a reconciler that dies
// after banking an orphan's logs (moving them out of the job directory) and
// before its settle commits: the exit record it wrote first must let the
// next reconcile settle the job with all its output.
func TestReconcileCrashAfterBankingKeepsTheOutput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := newOrphan(t, jobstore.Options{})
	st, r, j, dir := o.st, o.r, o.job, o.dir
	var err error
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stdout.log"), []byte("partial output\n"), 0o600))

	// The first reconciler: takes over, records, banks — and dies.
	rec, err := st.Get(ctx, j.ID)
	require.NoError(t, err)
	require.NoError(t, st.Claim(ctx, jobstore.ClaimParams{ID: j.ID, SupervisorPID: r.selfPID,
		SupervisorStart: r.selfTime, FromPID: rec.SupervisorPID, FromStart: rec.SupervisorStart}))
	exit := r.orphanRecord(rec, dir)
	require.NoError(t, writeExitRecord(dir, exit))
	_, err = bankStreams(ctx, st, r.arts, dir, exit)
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "stdout.log"))
	require.True(t, os.IsNotExist(err), "banking moved the log out of the job directory")
	// Its process is gone: the row now names a dead supervisor.
	require.NoError(t, st.Claim(ctx, jobstore.ClaimParams{ID: j.ID, SupervisorPID: o.job.SupervisorPID,
		FromPID: r.selfPID, FromStart: r.selfTime}))

	rep, err := r.Reconcile(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, rep.FromExitRecord)
	got, err := st.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateOrphaned, got.State)
	arts, err := st.Artifacts(ctx, j.ID)
	require.NoError(t, err)
	require.Len(t, arts, 2)
	res, err := r.ReadOutput(ctx, j.ID, bgcmd.Stdout, pageAll())
	require.NoError(t, err)
	require.Equal(t, "partial output\n", res.Text)
}

func pageAll() artifacts.Page { return artifacts.Page{} }

// TestReconcileCrashAfterLinkingKeepsTheOutput plays a batch reconciler that
// dies after banking an orphan's logs by hard link and before its settle
// commits: the logs are still in the job directory, so the next reconcile
// settles the job as orphaned with all its output, and the directory goes
// only once the job is settled.
func TestReconcileCrashAfterLinkingKeepsTheOutput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := newOrphan(t, jobstore.Options{})
	st, r, j, dir := o.st, o.r, o.job, o.dir
	var err error
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stdout.log"), []byte("partial output\n"), 0o600))

	// The first reconciler: takes over, banks by link — and dies.
	rec, err := st.Get(ctx, j.ID)
	require.NoError(t, err)
	require.NoError(t, st.Claim(ctx, jobstore.ClaimParams{ID: j.ID, SupervisorPID: r.selfPID,
		SupervisorStart: r.selfTime, FromPID: rec.SupervisorPID, FromStart: rec.SupervisorStart}))
	oj := &orphanJob{rec: rec, dir: dir}
	r.prepareSettle(ctx, oj, linkBanker{&artifacts.Store{Dir: r.arts.Dir, DeferSync: true}})
	require.Equal(t, reconcileOrphaned, oj.res)
	require.Contains(t, oj.exit.Error, "kept 15 bytes of stdout")
	require.FileExists(t, filepath.Join(dir, "stdout.log"), "banking by link leaves the log for the next reconciler")
	require.NoFileExists(t, filepath.Join(dir, exitRecordName), "an orphan needs no exit record")
	// Its process is gone: the row now names a dead supervisor.
	require.NoError(t, st.Claim(ctx, jobstore.ClaimParams{ID: j.ID, SupervisorPID: o.job.SupervisorPID,
		FromPID: r.selfPID, FromStart: r.selfTime}))

	rep, err := r.Reconcile(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Orphaned)
	got, err := st.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateOrphaned, got.State)
	require.Contains(t, got.Error, "kept 15 bytes of stdout and 0 bytes of stderr")
	arts, err := st.Artifacts(ctx, j.ID)
	require.NoError(t, err)
	require.Len(t, arts, 2)
	pendingHooks.Wait() // the directory is removed in the background, as Close waits for
	require.NoDirExists(t, dir, "the job directory is removed once settled")
	res, err := r.ReadOutput(ctx, j.ID, bgcmd.Stdout, pageAll())
	require.NoError(t, err)
	require.Equal(t, "partial output\n", res.Text)
	require.NoError(t, r.arts.Verify(arts[0].SHA256))
}
