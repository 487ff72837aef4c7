package jobstore_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

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

		for _, bad := range []string{"postgres://u:secret@host:notaport/db", "postgres://u:secret@host/db?sslmode=bogus",
			"postgresql://u:sec%zzret@host/db"} {
			_, err = jobstore.Open(ctx, jobstore.Options{DSN: bad, Host: "h"})
			require.ErrorContains(t, err, "does not parse")
			require.NotContains(t, err.Error(), "secret")
			require.NotContains(t, err.Error(), "sec%zzret")
		}
		_, err = jobstore.Open(ctx, jobstore.Options{DSN: "mysql://u:secret@h/db", Host: "h"})
		require.ErrorContains(t, err, "not a postgres:// or postgresql:// URL")
		require.NotContains(t, err.Error(), "secret")

		_, err = jobstore.Open(ctx, jobstore.Options{DSN: "postgres://bgcmd:secret@/nodb?host=/nonexistent&connect_timeout=5", Host: "h"})
		require.Error(t, err)
		require.ErrorContains(t, err, "cannot reach the PostgreSQL server")
		require.NotContains(t, err.Error(), "secret")
	})
}

// TestAuditRoleReadsTheViewsOnly: the README's audit role (SELECT on the
// views) runs `bgcmd sql` over the views; the tables are closed to it and
// a write is refused as read-only before any privilege is checked.
func TestAuditRoleReadsTheViewsOnly(t *testing.T) {
	t.Parallel()
	onPostgres(t, func(t *testing.T) {
		ctx := context.Background()
		dsn := freshPGDatabase(t)
		w := openTest(t, jobstore.Options{DSN: dsn})
		require.NoError(t, w.Create(ctx, newJob("a", "/usr/bin/make")))
		u, err := url.Parse(dsn)
		require.NoError(t, err)
		role := "bgcmd_audit_" + strings.TrimPrefix(u.Path, "/bgcmd_test_")
		db := rawDB(t, w)
		for _, q := range []string{
			`CREATE ROLE ` + role + ` LOGIN`,
			`GRANT CONNECT ON DATABASE ` + strings.TrimPrefix(u.Path, "/") + ` TO ` + role,
			`GRANT USAGE ON SCHEMA public TO ` + role,
			`GRANT SELECT ON job_durations, failures_by_exe, refusal_log, usage_by_exe, job_usage TO ` + role,
		} {
			_, err := db.Exec(q)
			require.NoError(t, err, q)
		}
		// Its grants go first (in this database and on it), then the role.
		t.Cleanup(func() {
			for _, q := range []string{`DROP OWNED BY ` + role, `DROP ROLE ` + role} {
				if _, err := db.Exec(q); err != nil {
					t.Logf("%s: %v", q, err)
				}
			}
		})
		q := u.Query()
		q.Set("user", role)
		u.RawQuery = q.Encode()
		ro := openTest(t, jobstore.Options{DSN: u.String(), ReadOnly: true})
		_, rows, err := collect(ro, `SELECT exe, state FROM job_durations`)
		require.NoError(t, err)
		require.Equal(t, []jobstore.QueryRow{{"/usr/bin/make", "running"}}, rows)
		_, _, err = collect(ro, `SELECT * FROM jobs`)
		require.ErrorContains(t, err, "permission denied")
		require.NotErrorIs(t, err, jobstore.ErrQueryWrites, "a read the role may not make is no write")
		_, _, err = collect(ro, `DELETE FROM jobs`)
		require.ErrorIs(t, err, jobstore.ErrQueryWrites)
	})
}

// TestWriteWaitsForTheWriteLockAtMostTheBusyTimeout: on PostgreSQL, as on
// SQLite, a write waits for another process's write transaction at most
// the busy timeout, then fails saying why; once the lock is free, writes
// go through again.
func TestWriteWaitsForTheWriteLockAtMostTheBusyTimeout(t *testing.T) {
	t.Parallel()
	onPostgres(t, func(t *testing.T) {
		ctx := context.Background()
		s := openTest(t, jobstore.Options{BusyTimeout: 300 * time.Millisecond})
		// Another writer: a transaction holding the store's write lock.
		other, err := rawDB(t, s).BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = other.Exec(`SELECT pg_advisory_xact_lock(?)`, jobstore.WriterLockKey)
		require.NoError(t, err)
		err = s.Create(ctx, newJob("a"))
		require.ErrorContains(t, err, "held the store's write lock for longer than the busy timeout")
		require.NoError(t, other.Rollback())
		require.NoError(t, s.Create(ctx, newJob("a")))
	})
}
