package jobstore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// storedRow is one row of job_hours as stored, stale flag included.
type storedRow struct {
	hourRow
	Stale int
}

func readStored(t *testing.T, db *sql.DB) []storedRow {
	t.Helper()
	rows, err := db.Query(`SELECT hour, outcome, exe, jobs, ran, ms_sum, ms_max, max_stale
		FROM job_hours ORDER BY hour, outcome, exe`)
	require.NoError(t, err)
	defer rows.Close()
	var out []storedRow
	for rows.Next() {
		var r storedRow
		require.NoError(t, rows.Scan(&r.Hour, &r.Outcome, &r.Exe, &r.Jobs, &r.Ran, &r.Sum, &r.Max, &r.Stale))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

// requireSameRollup checks that job_hours holds the same rows as want,
// sums to a microsecond (they may be added in another order).
func requireSameRollup(t *testing.T, want, got []storedRow, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s: rows %v, want %v", what, got, want)
	for i, w := range want {
		g := got[i]
		require.Equal(t, [3]string{w.Hour, w.Outcome, w.Exe}, [3]string{g.Hour, g.Outcome, g.Exe}, what)
		require.Equal(t, [3]int{w.Jobs, w.Ran, w.Stale}, [3]int{g.Jobs, g.Ran, g.Stale},
			"%s: jobs, ran and max_stale of %v", what, w)
		require.InDelta(t, w.Sum, g.Sum, 1e-3, "%s: ms_sum of %v", what, w)
		require.Equal(t, w.Max, g.Max, "%s: ms_max of %v", what, w)
	}
}

// seedRollupCases records the same jobs in s: in sessions "first",
// "middle" and "gone" those three prunes take, in "stay" the others,
// so that the roll-up rows the prunes change lose some runs (one its
// longest), all their runs while jobs that never ran stay (a stale row
// among them), or every job.
func seedRollupCases(t *testing.T, s *jobstore.Store, clock *time.Time) {
	t.Helper()
	ctx := context.Background()
	start := *clock
	ran := func(session, exe string, to bgcmd.State, code int, took time.Duration) {
		j := newJob(session, exe)
		require.NoError(t, s.Create(ctx, j))
		require.NoError(t, s.MarkStarted(ctx, jobstore.StartedParams{ID: j.ID, PID: 1, PGID: 1, StartedAt: *clock}))
		_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: to, ExitCode: &code, FinishedAt: clock.Add(took)})
		require.NoError(t, err)
		*clock = clock.Add(time.Minute)
	}
	never := func(session, exe string) {
		j := newJob(session, exe)
		require.NoError(t, s.Create(ctx, j))
		_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateStartFailed, Error: "not installed"})
		require.NoError(t, err)
		*clock = clock.Add(time.Minute)
	}
	for h := range 3 {
		*clock = start.Add(time.Duration(h) * time.Hour)
		// ok runs of make: the longest goes in hour 0, shorter ones in the others.
		for i := range 6 {
			session := []string{"gone", "stay"}[i%2]
			took := time.Duration(i+1) * time.Second
			if h == 0 && i == 4 {
				took = time.Minute // the hour's longest, pruned
			}
			ran(session, "/usr/bin/make", bgcmd.StateExited, 0, took)
		}
		// "other" of go: its longest run goes first (the row turns stale),
		// then the other, while the start that failed stays.
		ran("gone", "/usr/bin/go", bgcmd.StateOrphaned, 0, 3*time.Second)
		ran("first", "/usr/bin/go", bgcmd.StateOrphaned, 0, 5*time.Second)
		never("stay", "/usr/bin/go")
		never("middle", "/usr/bin/go") // goes between the two: the row stays stale
		// failed git: every job goes.
		ran("gone", "/usr/bin/git", bgcmd.StateExited, 1, 2*time.Second)
		never("gone", "/usr/bin/git")
	}
}

// TestAPrunesBatchesKeepTheRollupsExact: a prune's batches take their
// jobs out of job_hours and session_counters a statement per hour,
// outcome and executable (and per session): the roll-ups stay what a
// scan of jobs gives, a row's maximum turns stale exactly when its
// longest run went, and a row left with no job goes. A delete by hand
// changes neither; Recount then rebuilds both from jobs.
func TestAPrunesBatchesKeepTheRollupsExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	start := time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)
	clock := start
	s := openTest(t, jobstore.Options{Path: path, Now: func() time.Time { return clock }})
	seedRollupCases(t, s, &clock)
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	sessions := []string{"first", "middle", "gone", "stay"}
	until := start.Add(3 * time.Hour)
	before := readStored(t, db)
	requireRollupMatchesScan(t, s, db, start, until, "the seeded jobs")
	requireCountersMatchScan(t, s, db, sessions, "the seeded jobs")

	prune := func(session string, jobs int) {
		res, err := s.Prune(ctx, jobstore.PruneParams{Session: session, IncludeUnread: true, BatchSize: 7})
		require.NoError(t, err)
		require.Len(t, res.Jobs, jobs)
		requireRollupMatchesScan(t, s, db, start, until, "after pruning "+session)
		requireCountersMatchScan(t, s, db, sessions, "after pruning "+session)
	}
	prune("first", 3)
	var stale, emptied int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_hours WHERE max_stale = 1`).Scan(&stale))
	require.Equal(t, 3, stale, "each hour's go row lost its longest run")
	prune("middle", 3)
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_hours WHERE max_stale = 1`).Scan(&stale))
	require.Equal(t, 3, stale, "a job that never ran leaves the maximum as it was")
	prune("gone", 3*6)
	after := readStored(t, db)
	require.Less(t, len(after), len(before), "rows left with no job are gone")
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_hours WHERE max_stale = 1`).Scan(&stale))
	require.Equal(t, 1, stale, "the hour whose longest run went has a stale maximum")
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_hours
		WHERE exe = '/usr/bin/go' AND ran = 0 AND ms_sum = 0 AND ms_max IS NULL AND max_stale = 0 AND jobs = 1`).Scan(&emptied))
	require.Equal(t, 3, emptied, "a row whose every run went keeps its jobs that never ran, no run time and no stale maximum")

	// A delete by hand leaves the roll-ups as they were; a recount
	// rebuilds them, each maximum exact again.
	_, err = db.Exec(`DELETE FROM jobs WHERE exe = '/usr/bin/make'`)
	require.NoError(t, err)
	requireSameRollup(t, after, readStored(t, db), "after a delete by hand")
	require.NoError(t, s.Recount(ctx))
	requireRollupMatchesScan(t, s, db, start, until, "after a recount")
	requireCountersMatchScan(t, s, db, sessions, "after a recount")
	var makes int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_hours WHERE exe = '/usr/bin/make'`).Scan(&makes))
	require.Zero(t, makes)
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_hours WHERE max_stale = 1`).Scan(&stale))
	require.Zero(t, stale, "a recount leaves no stale maximum")
}

// TestMigrationRebuildsTheRollupsAndDropsTheirTriggers: a store from
// before 00020, whose roll-ups its triggers kept (and a hand made wrong),
// comes out of the migration with no trigger on jobs, no job_hours_bulk,
// and both roll-ups what a scan of jobs gives; the down migration puts the
// triggers back.
func TestMigrationRebuildsTheRollupsAndDropsTheirTriggers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	start := time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)
	clock := start
	s, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host", Now: func() time.Time { return clock }})
	require.NoError(t, err)
	seedRollupCases(t, s, &clock)
	require.NoError(t, s.Close())

	db := openRaw(t, path)
	triggers := func() int {
		var n int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM sqlite_schema
			WHERE (type = 'trigger' AND tbl_name = 'jobs') OR name = 'job_hours_bulk'`).Scan(&n))
		return n
	}
	require.Zero(t, triggers())
	require.NoError(t, jobstore.MigrateDownTo(ctx, path, 19))
	require.Equal(t, 7, triggers(), "the down migration puts back six triggers and job_hours_bulk")
	// At version 19 the triggers keep the roll-ups of a write by hand;
	// the counts made wrong by hand, they do not.
	_, err = db.Exec(`UPDATE jobs SET session = 'moved' WHERE session = 'first'`)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE session_counters SET finished = 99; UPDATE job_hours SET jobs = 99`)
	require.NoError(t, err)

	s = openTest(t, jobstore.Options{Path: path})
	require.Zero(t, triggers())
	requireRollupMatchesScan(t, s, db, start, start.Add(3*time.Hour), "after the migration")
	requireCountersMatchScan(t, s, db, []string{"first", "moved", "middle", "gone", "stay"}, "after the migration")
}

// TestMigration00020DownRestoresVersion19: migrated down from 20, a store
// has the triggers and tables of a store that version 19 made, statement
// for statement.
func TestMigration00020DownRestoresVersion19(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	schema := func(path string) []string {
		db := openRaw(t, path)
		rows, err := db.Query(`SELECT type || ' ' || name || ': ' || sql FROM sqlite_schema
			WHERE sql IS NOT NULL ORDER BY type, name`)
		require.NoError(t, err)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			out = append(out, s)
		}
		require.NoError(t, rows.Err())
		return out
	}
	made := filepath.Join(dir, "made.db")
	require.NoError(t, jobstore.MigrateUpTo(ctx, made, 19))
	down := filepath.Join(dir, "down.db")
	s, err := jobstore.Open(ctx, jobstore.Options{Path: down, Host: "test-host"})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, jobstore.MigrateDownTo(ctx, down, 19))
	require.Equal(t, schema(made), schema(down))
}
