package jobstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// countedSessions is every session's counters as a scan of jobs gives
// them, with every session that has a job.
const countedSessions = `SELECT session, SUM(state = 'running'),
	SUM(state NOT IN ('running', 'queued') AND seen_at IS NULL), SUM(state = 'queued')
	FROM jobs GROUP BY session ORDER BY session`

// requireCountersMatchScan checks Counters for every session in sessions,
// and Overview, against a scan of jobs; and that session_counters holds
// no count for a session without jobs.
func requireCountersMatchScan(t *testing.T, s *jobstore.Store, db *sql.DB, sessions []string, what string) {
	t.Helper()
	ctx := context.Background()
	want := map[string]bgcmd.Counters{}
	rows, err := db.Query(countedSessions)
	require.NoError(t, err)
	var total bgcmd.Counters
	for rows.Next() {
		var name string
		var c bgcmd.Counters
		require.NoError(t, rows.Scan(&name, &c.Running, &c.Finished, &c.Queued))
		want[name] = c
		total.Running += c.Running
		total.Finished += c.Finished
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	for _, name := range sessions {
		got, err := s.Counters(ctx, name)
		require.NoError(t, err)
		require.Equal(t, want[name], got, "%s: session %s", what, name)
	}
	o, err := s.Overview(ctx, time.Time{})
	require.NoError(t, err)
	require.Equal(t, [2]int{total.Running, total.Finished}, [2]int{o.Running, o.Unread}, "%s: overview", what)
	var stray int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM session_counters
		WHERE session NOT IN (SELECT session FROM jobs) AND (running <> 0 OR finished <> 0 OR queued <> 0)`).Scan(&stray))
	require.Zero(t, stray, "%s: counts left for a session without jobs", what)
}

// TestSessionCountersEqualAScanOfJobs: every write that moves a job in or
// out of a count (create, queue, dispatch, settle, a reconcile's settles,
// mark-seen, prune with and without unread jobs) leaves session_counters
// as a scan of jobs counts them; writes that move no count leave it
// alone; and after writes bgcmd never makes (a job moved to another
// session, a row deleted by hand), Recount makes it that scan again.
func TestSessionCountersEqualAScanOfJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	s := openTest(t, jobstore.Options{Path: path})
	db := openRaw(t, path)
	sessions := []string{"a", "b", "c", "none"}
	// job_hours is kept by the same writes.
	hour := time.Now().UTC().Truncate(time.Hour)
	check := func(what string) {
		t.Helper()
		requireCountersMatchScan(t, s, db, sessions, what)
		requireRollupMatchesScan(t, s, db, hour.Add(-time.Hour), hour.Add(2*time.Hour), what)
	}

	var running []string
	for i := range 60 {
		j := newJob(sessions[i%3])
		require.NoError(t, s.Create(ctx, j))
		running = append(running, j.ID)
	}
	check("after creates")

	var queued []string
	for i := range 12 {
		j := newJob(sessions[i%3])
		require.NoError(t, s.CreateQueued(ctx, j, jobstore.QueueLimits{Session: 1 + i%2}))
		queued = append(queued, j.ID)
	}
	check("after queueing")
	_, err := s.SettleQueued(ctx, queued[len(queued)-1], bgcmd.StateKilled, "killed while queued", nil)
	require.NoError(t, err)
	check("after a queued job settled")

	var orphans []jobstore.SettleParams
	for i, id := range running {
		code := i % 3
		switch {
		case i%5 == 0:
			continue // still running
		case i%7 == 1:
			orphans = append(orphans, jobstore.SettleParams{ID: id, To: bgcmd.StateOrphaned, Error: "supervisor died"})
		default:
			_, err := s.Settle(ctx, jobstore.SettleParams{ID: id, To: bgcmd.StateExited, ExitCode: &code})
			require.NoError(t, err)
		}
	}
	check("after settles")
	errs, err := s.SettleMany(ctx, orphans)
	require.NoError(t, err)
	for _, e := range errs {
		require.NoError(t, e)
	}
	check("after a reconcile's settles")

	// Every running job settles: the queued ones get their slots.
	for i, id := range running {
		if i%5 == 0 {
			_, err := s.Settle(ctx, jobstore.SettleParams{ID: id, To: bgcmd.StateKilled})
			require.NoError(t, err)
		}
	}
	res, err := s.Dispatch(ctx, func(*jobstore.Record) string { return "" })
	require.NoError(t, err)
	require.NotEmpty(t, res.Started)
	check("after a dispatch")

	for i, id := range running {
		if i%2 == 0 {
			_, err := s.MarkSeen(ctx, id)
			require.NoError(t, err)
		}
	}
	check("after mark-seen")

	// A write that moves no count leaves the counts alone.
	before := sessionCounterRows(t, db)
	_, err = db.Exec(`UPDATE jobs SET live_tail = 'x', kill_requested_at = '2026-12-01T00:00:00Z' WHERE state = 'running'`)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE jobs SET state = state, seen_at = seen_at`)
	require.NoError(t, err)
	require.Equal(t, before, sessionCounterRows(t, db))

	// Writes bgcmd never makes: a job moved to another session, a row
	// deleted by hand.
	_, err = db.Exec(`UPDATE jobs SET session = 'c' WHERE id = ?`, running[1])
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE jobs SET session = 'new' WHERE id IN (?, ?)`, queued[0], running[3])
	require.NoError(t, err)
	_, err = db.Exec(`PRAGMA foreign_keys = ON`)
	require.NoError(t, err)
	_, err = db.Exec(`DELETE FROM jobs WHERE id IN (?, ?)`, running[2], queued[1])
	require.NoError(t, err)
	require.Equal(t, before, sessionCounterRows(t, db), "only bgcmd's writes keep the counts")
	require.NoError(t, s.Recount(ctx))
	requireCountersMatchScan(t, s, db, append(sessions, "new"), "after writes by hand and a recount")

	_, err = s.Prune(ctx, jobstore.PruneParams{FinishedBefore: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	requireCountersMatchScan(t, s, db, append(sessions, "new"), "after a prune of read jobs")
	_, err = s.Prune(ctx, jobstore.PruneParams{Session: "a", IncludeUnread: true})
	require.NoError(t, err)
	requireCountersMatchScan(t, s, db, append(sessions, "new"), "after a prune of a session's unread jobs")
}

// sessionCounterRows is session_counters as it stands.
func sessionCounterRows(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT session, running, finished, queued FROM session_counters ORDER BY session`)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		var r, f, q int
		require.NoError(t, rows.Scan(&name, &r, &f, &q))
		out = append(out, fmt.Sprint(name, r, f, q))
	}
	require.NoError(t, rows.Err())
	return out
}

// TestMigrationCountsTheSessionsOfAnOlderStore: a store written before
// session_counters existed (migrated down past it, its rows written
// then) gets its counts from its jobs when it migrates.
func TestMigrationCountsTheSessionsOfAnOlderStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	old, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host"})
	require.NoError(t, err)
	require.NoError(t, old.Close())
	require.NoError(t, jobstore.MigrateDownTo(ctx, path, 15)) // the schema before session_counters
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	var tables int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM sqlite_schema WHERE name LIKE 'session_counters%'`).Scan(&tables))
	require.Zero(t, tables, "the down migration leaves no table or trigger")
	for i, row := range []struct {
		session, state string
		seen           bool
	}{
		{"a", "running", false}, {"a", "running", false}, {"a", "exited", false}, {"a", "exited", true},
		{"a", "queued", false}, {"b", "killed", false}, {"b", "timeout", true}, {"c", "exited", true},
	} {
		var seen any
		if row.seen {
			seen = "2026-11-30T00:00:01Z"
		}
		_, err = db.Exec(`INSERT INTO jobs (id, session, host, argv, exe, cwd, env_replaced, env_names, timeout_ms,
			kill_grace_ms, max_output_bytes, labels, state, created_at, seen_at)
			VALUES (?, ?, 'h', '["/bin/true"]', '/bin/true', '/', 0, '[]', 1000, 1000, 10, '{}', ?, '2026-11-30T00:00:00Z', ?)`,
			fmt.Sprintf("01a20000-0000-7000-8000-%012d", i), row.session, row.state, seen)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	s := openTest(t, jobstore.Options{Path: path})
	for session, want := range map[string]bgcmd.Counters{
		"a": {Running: 2, Finished: 1, Queued: 1}, "b": {Finished: 1}, "c": {}, "d": {},
	} {
		got, err := s.Counters(ctx, session)
		require.NoError(t, err)
		require.Equal(t, want, got, "session %s", session)
	}
	requireCountersMatchScan(t, s, openRaw(t, path), []string{"a", "b", "c", "d"}, "after the migration")
}
