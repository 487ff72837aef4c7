package jobstore

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// checkpointedJobs counts the jobs the database file itself holds, without
// its write-ahead log: those a checkpoint has copied into it. It reads a
// copy of the file, opened immutable, so the store's own log is not read.
func checkpointedJobs(t *testing.T, s *Store) int {
	t.Helper()
	src, err := os.Open(s.Path())
	require.NoError(t, err)
	defer src.Close()
	cp := filepath.Join(t.TempDir(), "copy.db")
	dst, err := os.Create(cp)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	db, err := sql.Open("sqlite", "file:"+cp+"?immutable=1")
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM jobs`).Scan(&n))
	return n
}

// createJobs creates n jobs, one write transaction each.
func createJobs(t *testing.T, s *Store, n int) {
	t.Helper()
	for range n {
		require.NoError(t, s.Create(context.Background(), benchJob()))
	}
}

// TestAStoreWithAReadPoolCheckpointsAfterItsCommits: the writer of a
// store with a read pool never checkpoints in its commits (its
// wal_autocheckpoint is 0); every checkpointEvery write transactions a
// passive checkpoint runs once the commit has returned instead, and
// copies what they wrote into the database file.
func TestAStoreWithAReadPoolCheckpointsAfterItsCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "bgcmd.db"), Host: "test-host"})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, 0, autocheckpoint(t, s), "the writer leaves checkpoints to the checkpointer")
	// The schema into the file, so that its copy can be read.
	_, err = s.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	require.NoError(t, err)

	createJobs(t, s, checkpointEvery-1)
	require.Zero(t, checkpointedJobs(t, s), "no checkpoint before checkpointEvery commits: every write is in the log")

	createJobs(t, s, 1)
	deadline := time.Now().Add(time.Minute)
	for n := checkpointedJobs(t, s); n != checkpointEvery; n = checkpointedJobs(t, s) {
		require.True(t, time.Now().Before(deadline), "the checkpoint copied %d of %d jobs", n, checkpointEvery)
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAStoreOnOneConnectionCheckpointsAtItsCommits: a store that reads
// through its writer (a detached supervisor's) has no read pool to
// checkpoint on: its writer checkpoints at walAutocheckpoint pages.
func TestAStoreOnOneConnectionCheckpointsAtItsCommits(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), "bgcmd.db"), Host: "test-host",
		OneConnection: true})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, walAutocheckpoint, autocheckpoint(t, s))
	require.Nil(t, s.ckpt)
}

// TestAStoreUnderSustainedWritesKeepsItsLogBounded: write after write with
// no pause, the checkpoints still copy the whole log, and each write after
// one starts the log again: the log file stays within a few checkpoints'
// worth of pages. (Checkpoints run beside the writes, on another
// connection, never caught up: the log grew by about 32 MiB every 500
// jobs.)
func TestAStoreUnderSustainedWritesKeepsItsLogBounded(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), "bgcmd.db"), Host: "test-host"})
	require.NoError(t, err)
	defer s.Close()
	const pageFrame = 4096 + 24 // a page in the log, with its frame header
	bound := int64(4 * checkpointEvery * 32 * pageFrame)
	for range 4 {
		createJobs(t, s, 5*checkpointEvery)
		fi, err := os.Stat(s.Path() + "-wal")
		require.NoError(t, err)
		require.Less(t, fi.Size(), bound, "the log grows with the writes instead of starting again")
	}
}
