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

// requireSameRollup checks that two stores' job_hours hold the same rows,
// sums to a microsecond (they are added in another order).
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

func TestAPrunesBatchesKeepTheRollupAsTheDeleteTriggerDoes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open := func() (*jobstore.Store, *sql.DB) {
		path := filepath.Join(t.TempDir(), "bgcmd.db")
		clock := time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)
		s := openTest(t, jobstore.Options{Path: path, Now: func() time.Time { return clock }})
		seedRollupCases(t, s, &clock)
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return s, db
	}
	pruned, prunedDB := open()
	_, triggerDB := open()
	before := readStored(t, prunedDB)
	requireSameRollup(t, before, readStored(t, triggerDB), "the same jobs")

	prune := func(session string, jobs int) {
		res, err := pruned.Prune(ctx, jobstore.PruneParams{Session: session, IncludeUnread: true, BatchSize: 7})
		require.NoError(t, err)
		require.Len(t, res.Jobs, jobs)
		// A row at a time, through the trigger.
		_, err = triggerDB.Exec(`DELETE FROM jobs WHERE session = ?`, session)
		require.NoError(t, err)
		requireSameRollup(t, readStored(t, triggerDB), readStored(t, prunedDB), "after pruning "+session)
	}
	prune("first", 3)
	var stale, emptied int
	require.NoError(t, prunedDB.QueryRow(`SELECT COUNT(*) FROM job_hours WHERE max_stale = 1`).Scan(&stale))
	require.Equal(t, 3, stale, "each hour's go row lost its longest run")
	prune("middle", 3)
	require.NoError(t, prunedDB.QueryRow(`SELECT COUNT(*) FROM job_hours WHERE max_stale = 1`).Scan(&stale))
	require.Equal(t, 3, stale, "a job that never ran leaves the maximum as it was")
	prune("gone", 3*6)
	after := readStored(t, triggerDB)
	require.Less(t, len(after), len(before), "rows left with no job are gone")
	require.NoError(t, prunedDB.QueryRow(`SELECT COUNT(*) FROM job_hours WHERE max_stale = 1`).Scan(&stale))
	require.Equal(t, 1, stale, "the hour whose longest run went has a stale maximum")
	require.NoError(t, prunedDB.QueryRow(`SELECT COUNT(*) FROM job_hours
		WHERE exe = '/usr/bin/go' AND ran = 0 AND ms_sum = 0 AND ms_max IS NULL AND max_stale = 0 AND jobs = 1`).Scan(&emptied))
	require.Equal(t, 3, emptied, "a row whose every run went keeps its jobs that never ran, no run time and no stale maximum")
	requireRollupMatchesScan(t, pruned, prunedDB, time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), "after the prune")

	// The marker never outlives a batch: a delete after the prune, by
	// anyone, keeps the roll-up through the trigger again.
	var marks int
	require.NoError(t, prunedDB.QueryRow(`SELECT COUNT(*) FROM job_hours_bulk`).Scan(&marks))
	require.Zero(t, marks)
	for _, db := range []*sql.DB{prunedDB, triggerDB} {
		_, err := db.Exec(`DELETE FROM jobs WHERE exe = '/usr/bin/make'`)
		require.NoError(t, err)
	}
	requireSameRollup(t, readStored(t, triggerDB), readStored(t, prunedDB), "after a delete outside prune")
	var makes int
	require.NoError(t, prunedDB.QueryRow(`SELECT COUNT(*) FROM job_hours WHERE exe = '/usr/bin/make'`).Scan(&makes))
	require.Zero(t, makes)
}
