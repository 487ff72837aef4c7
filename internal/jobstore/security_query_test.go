package jobstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// TestQueryConnectionStaysLockedWhenReused: the read pool hands the same
// connection to query after query; each one is refused its write, ATTACH or
// VACUUM INTO as the first was, and a cancelled context interrupts a query
// that would never end.
//
// SQLite only (ATTACH, VACUUM INTO, pragmas, the authorizer);
// TestQueryOnPostgresIsReadOnlyForReal is the PostgreSQL half.
func TestQueryConnectionStaysLockedWhenReused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "bgcmd.db")
	w := openTest(t, jobstore.Options{Path: path})
	require.NoError(t, w.Create(context.Background(), newJob("a", "/usr/bin/make", "test")))
	ro := openTest(t, jobstore.Options{Path: path, ReadOnly: true, ReadConns: 1})
	for round := 0; round < 3; round++ {
		for _, q := range []string{
			`ATTACH DATABASE '` + path + `' AS w`,
			`ATTACH DATABASE '` + filepath.Join(dir, "new.db") + `' AS n`,
			`VACUUM INTO '` + filepath.Join(dir, "copy.db") + `'`,
			`PRAGMA query_only = 0`,
			`DELETE FROM jobs`,
		} {
			_, _, err := collect(ro, q)
			require.ErrorIs(t, err, jobstore.ErrQueryWrites, "round %d: %s", round, q)
		}
		_, rows, err := collect(ro, `SELECT COUNT(*) FROM jobs`)
		require.NoError(t, err)
		require.Equal(t, []jobstore.QueryRow{{int64(1)}}, rows)
	}
	require.NoFileExists(t, filepath.Join(dir, "new.db"))
	require.NoFileExists(t, filepath.Join(dir, "copy.db"))

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := ro.Query(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n`,
		func([]string) error { return nil }, func(jobstore.QueryRow) error { return nil })
	require.Error(t, err, "the endless query was interrupted")
	_, rows, err := collect(ro, `SELECT COUNT(*) FROM jobs`)
	require.NoError(t, err, "the store still answers after an interrupted query")
	require.Equal(t, []jobstore.QueryRow{{int64(1)}}, rows)
}
