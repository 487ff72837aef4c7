package jobstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// onPostgres runs fn as t's "postgres" subtest (skipped without a server).
func onPostgres(t *testing.T, fn func(t *testing.T)) {
	t.Run(backendPostgres, func(t *testing.T) {
		pgServer(t)
		fn(t)
	})
}

// TestQueryOnPostgresIsReadOnlyForReal: `bgcmd sql` on PostgreSQL reads the
// documented views, and every write is refused by the server (a read-only
// session and a READ ONLY transaction) with ErrQueryWrites, as on SQLite;
// what a query does to its session (a setting, an advisory lock) does not
// outlive it, and a deadline stops a query that would not end.
func TestQueryOnPostgresIsReadOnlyForReal(t *testing.T) {
	t.Parallel()
	onPostgres(t, func(t *testing.T) {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "bgcmd.db")
		w := openTest(t, jobstore.Options{Path: path})
		require.NoError(t, w.Create(ctx, newJob("a", "/usr/bin/make", "test")))
		ro := openTest(t, jobstore.Options{Path: path, ReadOnly: true, ReadConns: 1})
		cols, rows, err := collect(ro, `SELECT exe, state, duration_ms, NULL AS empty FROM job_durations`)
		require.NoError(t, err)
		require.Equal(t, []string{"exe", "state", "duration_ms", "empty"}, cols)
		require.Equal(t, []jobstore.QueryRow{{"/usr/bin/make", "running", nil, nil}}, rows)

		for _, q := range []string{
			`DELETE FROM jobs`,
			`UPDATE jobs SET state = 'exited'`,
			`  insert into refusals (id, at, session, host, argv, cwd, code, message) values ('x','x','x','x','[]','x','x','x')`,
			`CREATE TABLE t (x int)`,
			`WITH x AS (SELECT 1) DELETE FROM job_events`,
			`SELECT nextval(pg_get_serial_sequence('job_events', 'seq'))`,
			`TRUNCATE jobs CASCADE`,
		} {
			_, _, err := collect(ro, q)
			require.ErrorIs(t, err, jobstore.ErrQueryWrites, q)
			require.ErrorContains(t, err, "read-only", q)
		}
		// Ending the READ ONLY transaction in the same text does not
		// reach a write: a query is one statement, and one that begins
		// with COMMIT is no query.
		_, _, err = collect(ro, `SELECT 1; DELETE FROM jobs`)
		require.ErrorContains(t, err, "multiple commands")
		_, _, err = collect(ro, `COMMIT; DELETE FROM jobs`)
		require.ErrorIs(t, err, jobstore.ErrQueryWrites)
		// Session state dies with the query's connection.
		_, _, err = collect(ro, `SELECT pg_advisory_lock(4242)`)
		require.NoError(t, err)
		// The server ends the closed session by itself: poll, with a deadline.
		raw := rawDB(t, w)
		got := false
		for deadline := time.Now().Add(30 * time.Second); !got && time.Now().Before(deadline); {
			require.NoError(t, raw.QueryRow(`SELECT pg_try_advisory_lock(4242)`).Scan(&got))
			if !got {
				time.Sleep(20 * time.Millisecond) // polling the server, not a synchronisation
			}
		}
		require.True(t, got, "the query's session lock was released with its connection")
		_, _, err = collect(ro, `SET default_transaction_read_only = off`)
		require.ErrorIs(t, err, jobstore.ErrQueryWrites, "SET is no query")
		_, _, err = collect(ro, `SELECT set_config('default_transaction_read_only', 'off', false)`)
		require.NoError(t, err)
		_, _, err = collect(ro, `DELETE FROM jobs`)
		require.ErrorIs(t, err, jobstore.ErrQueryWrites, "a setting does not outlive its query")

		qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err = ro.Query(qctx, `SELECT pg_sleep(600)`, func([]string) error { return nil }, func(jobstore.QueryRow) error { return nil })
		require.Error(t, err, "the endless query was stopped")
		require.Less(t, time.Since(start), 60*time.Second)

		_, rows, err = collect(ro, `SELECT COUNT(*) FROM jobs`)
		require.NoError(t, err)
		require.Equal(t, []jobstore.QueryRow{{int64(1)}}, rows)
		// Values come as the kinds QueryRow documents, as from SQLite.
		_, rows, err = collect(ro, `SELECT SUM(timeout_ms), AVG(1.5), true, 2::int4,
			'2026-05-01T12:00:00.5Z'::timestamptz, 'x'::bytea FROM jobs`)
		require.NoError(t, err)
		require.Equal(t, []jobstore.QueryRow{{int64(60000), 1.5, int64(1), int64(2),
			"2026-05-01T12:00:00.5Z", "x"}}, rows)
		require.ErrorIs(t, w.Query(ctx, `SELECT 1`, nil, nil), jobstore.ErrNotReadOnly)
	})
}

// TestViewsHaveTheSameColumnsOnBothBackends: the documented views are one
// interface for audit tooling, whichever backend holds them.
func TestViewsHaveTheSameColumnsOnBothBackends(t *testing.T) {
	t.Parallel()
	views := []string{"job_durations", "failures_by_exe", "refusal_log", "usage_by_exe", "job_usage"}
	columns := func(t *testing.T) map[string][]string {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "bgcmd.db")
		w := openTest(t, jobstore.Options{Path: path})
		j := newJob("a")
		require.NoError(t, w.Create(ctx, j))
		code := 1
		_, err := w.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code,
			Usage: &bgcmd.Usage{CPUUserMS: 3, CPUSystemMS: 4, MaxRSSKiB: 5}})
		require.NoError(t, err)
		require.NoError(t, w.RecordRefusal(ctx, &bgcmd.Refusal{Argv: []string{"/bin/rm"}, Cwd: "/", Code: "x", Message: "m"}))
		ro := openTest(t, jobstore.Options{Path: path, ReadOnly: true})
		out := map[string][]string{}
		for _, v := range views {
			cols, rows, err := collect(ro, `SELECT * FROM `+v)
			require.NoError(t, err, v)
			require.Len(t, rows, 1, v)
			out[v] = cols
		}
		_, rows, err := collect(ro, `SELECT argv0, failures, cpu_total_ms FROM refusal_log, failures_by_exe, job_usage`)
		require.NoError(t, err)
		require.Equal(t, []jobstore.QueryRow{{"/bin/rm", int64(1), int64(7)}}, rows)
		return out
	}
	var want map[string][]string
	t.Run(backendSQLite, func(t *testing.T) { want = columns(t) })
	onPostgres(t, func(t *testing.T) {
		require.Equal(t, want, columns(t))
	})
}
