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

// hourRow is one row of job_hours, or of the same roll-up computed by a
// scan of jobs.
type hourRow struct {
	Hour, Outcome, Exe string
	Jobs, Ran          int
	Sum                float64
	Max                sql.NullFloat64
}

// rollupScan is job_hours as a full scan of jobs gives it.
const rollupScan = `SELECT hour, outcome, exe, COUNT(*), COUNT(ms), COALESCE(SUM(ms), 0), MAX(ms) FROM (
	SELECT substr(created_at, 1, 13) AS hour, CASE
		WHEN state IN ('running', 'queued') THEN 'running'
		WHEN state = 'exited' AND exit_code = 0 THEN 'ok'
		WHEN state = 'exited' THEN 'failed'
		WHEN state IN ('timeout', 'killed') THEN state
		ELSE 'other' END AS outcome, exe,
		CASE WHEN started_at IS NOT NULL AND finished_at IS NOT NULL
		THEN (julianday(finished_at) - julianday(started_at)) * 86400000.0 END AS ms FROM jobs)
	GROUP BY hour, outcome, exe ORDER BY hour, outcome, exe`

// rollupStored is job_hours as the store's writes left it; a stale maximum is
// taken from jobs, as Charts does.
const rollupStored = `SELECT h.hour, h.outcome, h.exe, h.jobs, h.ran, h.ms_sum,
	CASE WHEN h.max_stale = 0 THEN h.ms_max ELSE (SELECT MAX(ms) FROM (
		SELECT (julianday(finished_at) - julianday(started_at)) * 86400000.0 AS ms, CASE
			WHEN state IN ('running', 'queued') THEN 'running'
			WHEN state = 'exited' AND exit_code = 0 THEN 'ok'
			WHEN state = 'exited' THEN 'failed'
			WHEN state IN ('timeout', 'killed') THEN state
			ELSE 'other' END AS outcome
		FROM jobs j WHERE substr(j.created_at, 1, 13) = h.hour AND j.exe = h.exe
		AND j.started_at IS NOT NULL AND j.finished_at IS NOT NULL) WHERE outcome = h.outcome) END
	FROM job_hours h ORDER BY h.hour, h.outcome, h.exe`

func readRollup(t *testing.T, db *sql.DB, query string) []hourRow {
	t.Helper()
	rows, err := db.Query(query)
	require.NoError(t, err)
	defer rows.Close()
	var out []hourRow
	for rows.Next() {
		var r hourRow
		require.NoError(t, rows.Scan(&r.Hour, &r.Outcome, &r.Exe, &r.Jobs, &r.Ran, &r.Sum, &r.Max))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

// requireRollupMatchesScan checks job_hours row by row against a full scan
// of jobs (sums to a microsecond: they are added in another order), and
// Charts over whole hours against JobsPerHour and DurationByExe.
func requireRollupMatchesScan(t *testing.T, s *jobstore.Store, db *sql.DB, since, until time.Time, what string) {
	t.Helper()
	want, got := readRollup(t, db, rollupScan), readRollup(t, db, rollupStored)
	require.Equal(t, len(want), len(got), "%s: roll-up rows %v, scan %v", what, got, want)
	for i := range want {
		w, g := want[i], got[i]
		require.Equal(t, [3]string{w.Hour, w.Outcome, w.Exe}, [3]string{g.Hour, g.Outcome, g.Exe}, what)
		require.Equal(t, w.Jobs, g.Jobs, "%s: jobs of %v", what, w)
		require.Equal(t, w.Ran, g.Ran, "%s: ran of %v", what, w)
		require.InDelta(t, w.Sum, g.Sum, 1e-3, "%s: ms_sum of %v", what, w)
		require.Equal(t, w.Max.Valid, g.Max.Valid, "%s: ms_max of %v", what, w)
		require.InDelta(t, w.Max.Float64, g.Max.Float64, 1e-6, "%s: ms_max of %v", what, w)
	}
	ctx := context.Background()
	charts, err := s.Charts(ctx, since, until, 100)
	require.NoError(t, err)
	hours, err := s.JobsPerHour(ctx, since, until)
	require.NoError(t, err)
	require.ElementsMatch(t, hours, charts.Hours, what)
	exes, err := s.DurationByExe(ctx, since, until, 100)
	require.NoError(t, err)
	require.Len(t, charts.Exes, len(exes), what)
	for i := range exes {
		require.Equal(t, exes[i].Exe, charts.Exes[i].Exe, what)
		require.Equal(t, exes[i].Jobs, charts.Exes[i].Jobs, what)
		require.InDelta(t, float64(exes[i].Mean), float64(charts.Exes[i].Mean), float64(time.Microsecond), what)
		require.InDelta(t, float64(exes[i].Max), float64(charts.Exes[i].Max), float64(time.Microsecond), what)
	}
}

func TestRollupEqualsAFullScanAfterSettlesReconcilesAndPrunes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	start := time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)
	clock := start
	s := openTest(t, jobstore.Options{Path: path, Now: func() time.Time { return clock }})
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	defer db.Close()
	since, until := start, start.Add(12*time.Hour)

	exes := []string{"/usr/bin/make", "/usr/bin/go", "/usr/bin/git"}
	var ids, running []string
	var orphans []jobstore.SettleParams
	for i := range 120 {
		j := newJob("s", exes[i%3])
		require.NoError(t, s.Create(ctx, j))
		ids = append(ids, j.ID)
		if i%13 == 12 {
			clock = clock.Add(5 * time.Minute)
			continue // never starts: settles as start_failed below
		}
		require.NoError(t, s.MarkStarted(ctx, jobstore.StartedParams{ID: j.ID, PID: 1, PGID: 1, StartedAt: clock}))
		code := []int{0, 1, 0, 2, 0}[i%5]
		took := time.Duration(i%17+1) * 250 * time.Millisecond
		switch {
		case i%9 == 4:
			running = append(running, j.ID) // still running
		case i%7 == 3:
			// Reconcile settles many at once.
			orphans = append(orphans, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateOrphaned,
				Error: "supervisor died", FinishedAt: clock.Add(took)})
		default:
			to := []bgcmd.State{bgcmd.StateExited, bgcmd.StateExited, bgcmd.StateKilled, bgcmd.StateTimeout}[i%4]
			_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: to, ExitCode: &code, FinishedAt: clock.Add(took)})
			require.NoError(t, err)
		}
		clock = clock.Add(5 * time.Minute)
	}
	for i, id := range ids {
		if i%13 == 12 {
			_, err := s.Settle(ctx, jobstore.SettleParams{ID: id, To: bgcmd.StateStartFailed, Error: "not installed"})
			require.NoError(t, err)
		}
	}
	requireRollupMatchesScan(t, s, db, since, until, "after settles")

	errs, err := s.SettleMany(ctx, orphans)
	require.NoError(t, err)
	for _, e := range errs {
		require.NoError(t, e)
	}
	requireRollupMatchesScan(t, s, db, since, until, "after a reconcile's settles")

	// The longest job of an hour whose other jobs stay, in a session of
	// its own: pruning it lowers that hour's maximum.
	clock = start.Add(8*time.Hour + 30*time.Minute)
	long := newJob("long", exes[0])
	require.NoError(t, s.Create(ctx, long))
	require.NoError(t, s.MarkStarted(ctx, jobstore.StartedParams{ID: long.ID, PID: 1, PGID: 1, StartedAt: clock}))
	zero := 0
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: long.ID, To: bgcmd.StateExited, ExitCode: &zero, FinishedAt: clock.Add(time.Hour)})
	require.NoError(t, err)
	requireRollupMatchesScan(t, s, db, since, until, "after the longest job")
	var stale int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_hours WHERE max_stale = 1`).Scan(&stale))
	require.Zero(t, stale)
	_, err = s.Prune(ctx, jobstore.PruneParams{Session: "long", IncludeUnread: true})
	require.NoError(t, err)
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_hours WHERE max_stale = 1`).Scan(&stale))
	require.Equal(t, 1, stale, "the hour whose longest job went has a stale maximum")
	requireRollupMatchesScan(t, s, db, since, until, "after pruning the longest job of an hour")

	// Prune: a state, then a window, then all but the newest few; read
	// jobs only unless asked.
	_, err = s.Prune(ctx, jobstore.PruneParams{States: []bgcmd.State{bgcmd.StateKilled}, IncludeUnread: true})
	require.NoError(t, err)
	requireRollupMatchesScan(t, s, db, since, until, "after pruning a state")
	_, err = s.Prune(ctx, jobstore.PruneParams{FinishedBefore: start.Add(3*time.Hour + 10*time.Minute), IncludeUnread: true})
	require.NoError(t, err)
	requireRollupMatchesScan(t, s, db, since, until, "after pruning the oldest hours and part of one")
	_, err = s.Prune(ctx, jobstore.PruneParams{KeepLast: 20, IncludeUnread: true})
	require.NoError(t, err)
	requireRollupMatchesScan(t, s, db, since, until, "after keep-last")

	// The running ones settle last; the table then holds no running row.
	for _, id := range running {
		code := 0
		_, err := s.Settle(ctx, jobstore.SettleParams{ID: id, To: bgcmd.StateExited, ExitCode: &code})
		require.NoError(t, err)
	}
	requireRollupMatchesScan(t, s, db, since, until, "after the running jobs settled")
	var left int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_hours WHERE outcome = 'running'`).Scan(&left))
	require.Zero(t, left)
}

// The charts of a window that does not start or end on the hour count the
// part hours from jobs and the whole ones from the roll-up: the same as
// the scan.
func TestChartsOfAWindowOffTheHourMatchTheScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	start := time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)
	clock := start
	s := openTest(t, jobstore.Options{Path: path, Now: func() time.Time { return clock }})
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	defer db.Close()
	for i := range 60 {
		j := newJob("s", "/usr/bin/make")
		require.NoError(t, s.Create(ctx, j))
		require.NoError(t, s.MarkStarted(ctx, jobstore.StartedParams{ID: j.ID, PID: 1, PGID: 1, StartedAt: clock}))
		code := i % 2
		_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code,
			FinishedAt: clock.Add(time.Duration(i+1) * time.Second)})
		require.NoError(t, err)
		clock = clock.Add(7 * time.Minute)
	}
	for _, w := range [][2]time.Time{
		{start.Add(17 * time.Minute), start.Add(5*time.Hour + 3*time.Minute)},
		{start.Add(61 * time.Minute), start.Add(62 * time.Minute)},
		{start.Add(time.Hour), start.Add(4 * time.Hour)},
	} {
		requireRollupMatchesScan(t, s, db, w[0], w[1], w[0].String()+" to "+w[1].String())
	}
}
