package jobstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// collect runs q and returns its columns and rows.
func collect(s *jobstore.Store, q string) ([]string, []jobstore.QueryRow, error) {
	var cols []string
	var rows []jobstore.QueryRow
	err := s.Query(context.Background(), q,
		func(c []string) error { cols = c; return nil },
		func(r jobstore.QueryRow) error { rows = append(rows, r); return nil })
	return cols, rows, err
}

// SQLite only (the -wal file, pragmas); TestQueryOnPostgresIsReadOnlyForReal
// is the PostgreSQL half.
func TestQueryReadsViewsAndSQLiteRefusesEveryWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	w := openTest(t, jobstore.Options{Path: path})
	require.NoError(t, w.Create(ctx, newJob("a", "/usr/bin/make", "test")))
	require.NoError(t, w.Close()) // the last writer goes: SQLite checkpoints, and keeps -wal and -shm
	for _, f := range []string{path + "-wal", path + "-shm"} {
		_, err := os.Stat(f)
		require.NoError(t, err, "the store keeps its write-ahead log across processes")
		// The checkpoint at close moved every row into the database: a
		// read-only open works without the log and its index too.
		require.NoError(t, os.Remove(f))
	}

	ro := openTest(t, jobstore.Options{Path: path, ReadOnly: true})
	cols, rows, err := collect(ro, `SELECT exe, state, duration_ms, NULL AS empty FROM job_durations`)
	require.NoError(t, err)
	require.Equal(t, []string{"exe", "state", "duration_ms", "empty"}, cols)
	require.Equal(t, []jobstore.QueryRow{{"/usr/bin/make", "running", nil, nil}}, rows)

	for _, q := range []string{
		`DELETE FROM jobs`,
		`UPDATE jobs SET state = 'exited'`,
		`  insert into refusals (id, at, session, host, argv, cwd, code, message) values ('x','x','x','x','[]','x','x','x')`,
		`PRAGMA query_only = 0; DELETE FROM jobs`,
		`CREATE TABLE t (x)`,
		`WITH x AS (SELECT 1) DELETE FROM job_events`,
	} {
		_, _, err := collect(ro, q)
		require.ErrorContains(t, err, "readonly", q)
	}
	_, rows, err = collect(ro, `SELECT COUNT(*) FROM jobs`)
	require.NoError(t, err)
	require.Equal(t, []jobstore.QueryRow{{int64(1)}}, rows)

	rw := openTest(t, jobstore.Options{Path: path})
	require.ErrorIs(t, rw.Query(ctx, `SELECT 1`, nil, nil), jobstore.ErrNotReadOnly)
}
