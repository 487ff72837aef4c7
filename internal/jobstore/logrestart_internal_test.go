package jobstore

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// logSalt returns the salts of the store's write-ahead log (bytes 16 to
// 23 of its header), which SQLite changes each time the log starts again.
func logSalt(t *testing.T, s *Store) string {
	t.Helper()
	b, err := os.ReadFile(s.Path() + "-wal")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(b), 24, "the log has no header")
	return string(b[16:24])
}

// openLikeASupervisor opens a store on a new file with one connection, as
// a detached supervisor does.
func openLikeASupervisor(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), "bgcmd.db"), Host: "test-host", OneConnection: true})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// TestReadyLogLeavesTheNextWriteToStartTheLog: ReadyLog on a supervisor's
// store copies the log into the database and says so; the next write,
// the supervisor's settle, then starts the log again from its beginning
// (its salts change), and the log file is small enough to leave to the
// next process.
func TestReadyLogLeavesTheNextWriteToStartTheLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openLikeASupervisor(t)
	createJobs(t, s, 3)
	before := logSalt(t, s)

	copied, err := s.ReadyLog(ctx)
	require.NoError(t, err)
	require.True(t, copied, "with no reader, a passive checkpoint copies the whole log")
	require.Equal(t, 3, checkpointedJobs(t, s), "the jobs are in the database file itself")
	require.Equal(t, before, logSalt(t, s), "the checkpoint itself does not start the log again")

	createJobs(t, s, 1)
	require.NotEqual(t, before, logSalt(t, s), "the write after the checkpoint started the log again")
	require.True(t, LogWithin(s))
}

// TestReadyLogSaysNoWhileAReaderNeedsTheLog: a reader in a transaction
// begun before the last commit keeps a checkpoint from copying that
// commit; ReadyLog then says the log was not all copied (the supervisor
// closes the store as before), and says yes once the reader is done.
func TestReadyLogSaysNoWhileAReaderNeedsTheLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openLikeASupervisor(t)
	createJobs(t, s, 1)
	reader, err := sql.Open("sqlite", "file:"+s.Path())
	require.NoError(t, err)
	defer reader.Close()
	tx, err := reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	var n int
	require.NoError(t, tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs`).Scan(&n))
	require.Equal(t, 1, n)
	createJobs(t, s, 1)

	copied, err := s.ReadyLog(ctx)
	require.NoError(t, err)
	require.False(t, copied, "the reader's snapshot keeps the last commit in the log")

	require.NoError(t, tx.Rollback())
	copied, err = s.ReadyLog(ctx)
	require.NoError(t, err)
	require.True(t, copied)
	require.Equal(t, 2, checkpointedJobs(t, s))
}
