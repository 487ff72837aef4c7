package jobstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// TestOpenOnPostgres: the PostgreSQL half of opening a store: a fresh
// database is migrated once (a second open applies nothing), one migrated
// by a newer bgcmd is refused untouched, a read-only open of a database
// without the schema is refused, a DSN that is not a PostgreSQL URL is
// refused, and no message shows the DSN's password.
func TestOpenOnPostgres(t *testing.T) {
	t.Parallel()
	onPostgres(t, func(t *testing.T) {
		ctx := context.Background()
		dsn := freshPGDatabase(t)
		s := openTest(t, jobstore.Options{DSN: dsn})
		require.NoError(t, s.Create(ctx, newJob("a")))
		db := rawDB(t, s)
		var versions int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM goose_db_version`).Scan(&versions))
		s2 := openTest(t, jobstore.Options{DSN: dsn})
		res, err := s2.List(ctx, jobstore.ListParams{})
		require.NoError(t, err)
		require.Len(t, res.Jobs, 1)
		var after int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM goose_db_version`).Scan(&after))
		require.Equal(t, versions, after, "reopening applies no migration")

		_, err = db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)`)
		require.NoError(t, err)
		_, err = jobstore.Open(ctx, jobstore.Options{DSN: dsn, Host: "h"})
		require.ErrorContains(t, err, "newer than this bgcmd knows")

		_, err = jobstore.Open(ctx, jobstore.Options{DSN: freshPGDatabase(t), ReadOnly: true, Host: "h"})
		require.ErrorContains(t, err, "holds no bgcmd schema")

		_, err = jobstore.Open(ctx, jobstore.Options{DSN: "mysql://u:secret@h/db", Host: "h"})
		require.ErrorContains(t, err, "not a postgres:// or postgresql:// URL")
		require.NotContains(t, err.Error(), "secret")

		_, err = jobstore.Open(ctx, jobstore.Options{DSN: "postgres://bgcmd:secret@/nodb?host=/nonexistent&connect_timeout=5", Host: "h"})
		require.Error(t, err)
		require.ErrorContains(t, err, "cannot reach the PostgreSQL server")
		require.NotContains(t, err.Error(), "secret")
	})
}
