package jobstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/migrations"
)

// The queue migration rebuilds jobs: every row, event, artifact and hook
// row of a store written before it survives (dropping the old table must
// not cascade), and the new CHECK takes the new states.
// SQLite only: migration 9 rebuilt SQLite's jobs table; PostgreSQL's
// schema starts with the queue.
func TestQueueMigrationKeepsEveryRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.FS, goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 6)
	require.NoError(t, err)
	for i := range 3 {
		id := fmt.Sprintf("job-%d", i)
		_, err = db.Exec(`INSERT INTO jobs (id, session, host, argv, exe, cwd, timeout_ms, kill_grace_ms,
			max_output_bytes, state, exit_code, created_at, finished_at) VALUES (?, 's', 'test-host', '["/bin/true"]', '/bin/true', '/',
			1000, 1000, 100, 'exited', 0, '2026-01-01T00:00:00.000000000Z', '2026-01-01T00:00:01.000000000Z')`, id)
		require.NoError(t, err)
		_, err = db.Exec(`INSERT INTO job_events (job_id, from_state, to_state, at) VALUES (?, NULL, 'running', 'x'), (?, 'running', 'exited', 'y')`, id, id)
		require.NoError(t, err)
		_, err = db.Exec(`INSERT INTO artifacts (id, job_id, stream, sha256, bytes, chars, lines, created_at) VALUES (?, ?, 'stdout', 'h', 0, 0, 0, 'z')`, "a"+id, id)
		require.NoError(t, err)
		_, err = db.Exec(`INSERT INTO hook_runs (job_id, argv, timeout_ms) VALUES (?, '["/bin/true"]', 1000)`, id)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	s := openTest(t, jobstore.Options{Path: path})
	rdb, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer rdb.Close()
	for table, want := range map[string]int{"jobs": 3, "job_events": 6, "artifacts": 3, "hook_runs": 3} {
		var n int
		require.NoError(t, rdb.QueryRow(`SELECT COUNT(*) FROM `+table).Scan(&n))
		require.Equal(t, want, n, table)
	}
	var fk int
	require.NoError(t, rdb.QueryRow(`SELECT COUNT(*) FROM pragma_foreign_key_check`).Scan(&fk))
	require.Zero(t, fk)
	var failures int
	require.NoError(t, rdb.QueryRow(`SELECT COALESCE(SUM(failures), 0) FROM failures_by_exe`).Scan(&failures))
	require.Zero(t, failures)

	j := newJob("s")
	require.NoError(t, s.CreateQueued(ctx, j, jobstore.QueueLimits{Session: 1}))
	rec, err := s.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateQueued, rec.State)
	c, err := s.Counters(ctx, "s")
	require.NoError(t, err)
	require.Equal(t, bgcmd.Counters{Queued: 1, Finished: 3}, c, "a queued job is not finished")
	// Deleting a job still cascades to its rows: the foreign keys point at the new table.
	_, err = s.Prune(ctx, jobstore.PruneParams{Session: "s", IncludeUnread: true})
	require.NoError(t, err)
	var events int
	require.NoError(t, rdb.QueryRow(`SELECT COUNT(*) FROM job_events WHERE job_id LIKE 'job-%'`).Scan(&events))
	require.Zero(t, events)
}

func TestQueueDependencyRefusals(t *testing.T) {
	t.Parallel()
	eachBackend(t, testQueueDependencyRefusals)
}

func testQueueDependencyRefusals(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	a := newJob("s")
	require.NoError(t, s.Create(ctx, a))
	other := newJob("t")
	require.NoError(t, s.Create(ctx, other))

	self := newJob("s")
	self.ID = jobstore.NewID()
	self.After = []string{self.ID}
	err := s.CreateQueued(ctx, self, jobstore.QueueLimits{})
	require.True(t, errors.Is(err, jobstore.ErrBadDependency), "%v", err)
	require.Contains(t, err.Error(), "cycle")

	for _, dep := range []string{other.ID, jobstore.NewID()} {
		j := newJob("s")
		j.After = []string{a.ID, dep}
		err = s.CreateQueued(ctx, j, jobstore.QueueLimits{})
		require.True(t, errors.Is(err, jobstore.ErrBadDependency), "%v", err)
		require.Contains(t, err.Error(), "no such job in session s")
		_, gerr := s.Get(ctx, j.ID)
		require.True(t, errors.Is(gerr, bgcmd.ErrNotFound), "a refused job is not created")
	}
}

func TestQueueDispatchIsFIFOWithinLimitsAndFailsDependants(t *testing.T) {
	t.Parallel()
	eachBackend(t, testQueueDispatchIsFIFOWithinLimitsAndFailsDependants)
}

func testQueueDispatchIsFIFOWithinLimitsAndFailsDependants(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	var q []*bgcmd.Job
	for range 3 {
		j := newJob("s")
		j.Group = "g"
		require.NoError(t, s.CreateQueued(ctx, j, jobstore.QueueLimits{Group: 2}))
		q = append(q, j)
	}
	res, err := s.Dispatch(ctx, nil)
	require.NoError(t, err)
	require.Len(t, res.Started, 2)
	require.Equal(t, q[0].ID, res.Started[0].ID)
	require.Equal(t, q[1].ID, res.Started[1].ID)
	res, err = s.Dispatch(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, res.Started, "the group is full")

	dep := newJob("s")
	dep.After = []string{q[0].ID}
	require.NoError(t, s.CreateQueued(ctx, dep, jobstore.QueueLimits{}))
	dep2 := newJob("s")
	dep2.After = []string{dep.ID}
	require.NoError(t, s.CreateQueued(ctx, dep2, jobstore.QueueLimits{}))
	code := 1
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: q[0].ID, To: bgcmd.StateExited, ExitCode: &code})
	require.NoError(t, err)
	res, err = s.Dispatch(ctx, nil)
	require.NoError(t, err)
	require.Len(t, res.Started, 1)
	require.Equal(t, q[2].ID, res.Started[0].ID)
	require.Len(t, res.Settled, 2)
	for _, r := range res.Settled {
		require.Equal(t, bgcmd.StateDependencyFailed, r.State)
	}
	_, err = s.SettleQueued(ctx, q[2].ID, bgcmd.StateKilled, "x", nil)
	require.True(t, errors.Is(err, bgcmd.ErrInvalidTransition), "a dispatched job is no longer queued: %v", err)
}

func TestQueueDispatchHigherPriorityFirst(t *testing.T) {
	t.Parallel()
	eachBackend(t, testQueueDispatchHigherPriorityFirst)
}

func testQueueDispatchHigherPriorityFirst(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	var ids []string
	for _, prio := range []int{0, 5, 0, 5} {
		j := newJob("s")
		j.Group, j.Priority = "g", prio
		require.NoError(t, s.CreateQueued(ctx, j, jobstore.QueueLimits{Group: 1}))
		ids = append(ids, j.ID)
	}
	pos, err := s.QueuePositions(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int{ids[1]: 1, ids[3]: 2, ids[0]: 3, ids[2]: 4}, pos)
	var order []string
	for range ids {
		res, err := s.Dispatch(ctx, nil)
		require.NoError(t, err)
		require.Len(t, res.Started, 1)
		order = append(order, res.Started[0].ID)
		code := 0
		_, err = s.Settle(ctx, jobstore.SettleParams{ID: res.Started[0].ID, To: bgcmd.StateExited, ExitCode: &code})
		require.NoError(t, err)
	}
	require.Equal(t, []string{ids[1], ids[3], ids[0], ids[2]}, order)
}

func TestSettleAndPeekSaysWhetherAJobWaitsAndCounts(t *testing.T) {
	t.Parallel()
	eachBackend(t, testSettleAndPeekSaysWhetherAJobWaitsAndCounts)
}

func testSettleAndPeekSaysWhetherAJobWaitsAndCounts(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	code := 0
	settle := func(id string) (bool, error) {
		rec, after, err := s.SettleAndPeek(ctx, jobstore.SettleParams{ID: id, To: bgcmd.StateExited, ExitCode: &code})
		if err != nil {
			require.Zero(t, after, "a settle that failed reads nothing")
			return after.Queued, err
		}
		now, err := s.Counters(ctx, rec.Session)
		require.NoError(t, err)
		require.Equal(t, now, after.Counters, "the counters as the settle left them")
		return after.Queued, nil
	}
	running := func() string {
		j := newJob("s")
		require.NoError(t, s.Create(ctx, j))
		return j.ID
	}
	queued, err := settle(running())
	require.NoError(t, err)
	require.False(t, queued, "nothing is queued")

	q := newJob("s")
	require.NoError(t, s.CreateQueued(ctx, q, jobstore.QueueLimits{Session: 1}))
	has, err := s.HasQueued(ctx)
	require.NoError(t, err)
	require.True(t, has)
	queued, err = settle(running())
	require.NoError(t, err)
	require.True(t, queued, "the settle sees the queued job HasQueued sees")

	again := running()
	_, err = settle(again)
	require.NoError(t, err)
	queued, err = settle(again)
	require.ErrorIs(t, err, bgcmd.ErrInvalidTransition, "a job settles once")
	require.False(t, queued, "a settle that failed says nothing of the queue")

	_, err = s.SettleQueued(ctx, q.ID, bgcmd.StateKilled, "not wanted", nil)
	require.NoError(t, err)
	queued, err = settle(running())
	require.NoError(t, err)
	require.False(t, queued, "the queued job has settled")
}
