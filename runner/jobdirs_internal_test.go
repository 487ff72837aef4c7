package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// TestAReusedDirectorysEarlierExitRecordDoesNotSettleTheNewJob plays a
// crash right after a job started in a directory an earlier job settled
// in: the earlier job's exit record (exit code 0) is still there, and the
// reconciler must settle the new job as orphaned, not with that code.
func TestAReusedDirectorysEarlierExitRecordDoesNotSettleTheNewJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := newOrphan(t, jobstore.Options{})
	st, r, j, dir := o.st, o.r, o.job, o.dir
	var err error
	zero := 0
	require.NoError(t, writeExitRecordUnsynced(dir, &exitRecord{JobID: jobstore.NewID(),
		State: bgcmd.StateExited, ExitCode: &zero, FinishedAt: time.Now().UTC()}))

	_, err = r.Reconcile(ctx)
	require.NoError(t, err)
	got, err := st.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateOrphaned, got.State, "settled from another job's exit record")
	require.Nil(t, got.ExitCode)
}

// TestAnExitRecordOverwrittenInPlaceReadsAsTheNewOne: a shorter record
// written over a longer one in place reads back exactly, and a record
// without a job id (written before records named their job) still counts.
func TestAnExitRecordOverwrittenInPlaceReadsAsTheNewOne(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), jobstore.NewID())
	require.NoError(t, os.Mkdir(dir, 0o700))
	id := filepath.Base(dir)
	long, short := 3, 7
	require.NoError(t, writeExitRecordUnsynced(dir, &exitRecord{JobID: id, State: bgcmd.StateExited,
		ExitCode: &long, Error: "a long message that makes this record the longer of the two",
		FinishedAt: time.Now().UTC()}))
	require.NoError(t, writeExitRecordUnsynced(dir, &exitRecord{JobID: id, State: bgcmd.StateExited,
		ExitCode: &short, FinishedAt: time.Now().UTC()}))
	rec, err := readExitRecord(dir)
	require.NoError(t, err)
	require.NotNil(t, rec)
	require.Equal(t, 7, *rec.ExitCode)
	require.Empty(t, rec.Error)

	require.NoError(t, os.WriteFile(filepath.Join(dir, exitRecordName),
		[]byte(`{"state":"exited","exit_code":0,"finished_at":"2026-01-01T00:00:00Z"}`), 0o600))
	rec, err = readExitRecord(dir)
	require.NoError(t, err)
	require.NotNil(t, rec, "a record without a job id is the directory's own")
	require.Equal(t, bgcmd.StateExited, rec.State)
}

// TestASettledDirectoryIsEmptiedAndReused: an in-process job's settled
// directory leaves jobs/ emptied of everything but its exit record, and
// the next job starts in it (a rename, not a new directory).
func TestASettledDirectoryIsEmptiedAndReused(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	jobs := filepath.Join(home, "jobs")
	first := filepath.Join(jobs, jobstore.NewID())
	require.NoError(t, os.MkdirAll(first, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(first, "stdout.log"), []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(first, "kill-request.1"), nil, 0o600))
	require.NoError(t, writeExitRecordUnsynced(first, &exitRecord{JobID: filepath.Base(first), State: bgcmd.StateExited}))
	var before os.FileInfo
	before, err := os.Stat(first)
	require.NoError(t, err)

	recycleJobDir(first)
	require.NoDirExists(t, first)
	spares, err := os.ReadDir(filepath.Join(home, spareDirsName))
	require.NoError(t, err)
	require.Len(t, spares, 1)

	second := filepath.Join(jobs, jobstore.NewID())
	require.NoError(t, makeJobDir(second))
	after, err := os.Stat(second)
	require.NoError(t, err)
	require.True(t, os.SameFile(before, after), "the spare directory was reused")
	require.Equal(t, os.FileMode(0o700), after.Mode().Perm())
	entries, err := os.ReadDir(second)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the earlier exit record is left")
	rec, err := readExitRecord(second)
	require.NoError(t, err)
	require.Nil(t, rec, "the earlier job's record is not the new job's")

	third := filepath.Join(jobs, jobstore.NewID())
	require.NoError(t, makeJobDir(third), "no spare left: a new directory")
	require.DirExists(t, third)
}
