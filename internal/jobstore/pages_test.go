package jobstore_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// walTrees names the b-tree of each frame the write-ahead log of path
// holds, in order, with "COMMIT" after each commit frame: what the writes
// since the last checkpoint cost, page by page.
func walTrees(t *testing.T, db *sql.DB, path string) []string {
	t.Helper()
	owner := map[uint32]string{}
	rows, err := db.Query(`SELECT name, pageno FROM dbstat`)
	require.NoError(t, err)
	for rows.Next() {
		var name string
		var page uint32
		require.NoError(t, rows.Scan(&name, &page))
		owner[page] = name
	}
	require.NoError(t, rows.Err())
	rows.Close()
	wal, err := os.ReadFile(path + "-wal")
	require.NoError(t, err)
	require.Greater(t, len(wal), 32, "the log holds frames")
	pageSize := int(binary.BigEndian.Uint32(wal[8:12]))
	var out []string
	for off := 32; off+24+pageSize <= len(wal); off += 24 + pageSize {
		out = append(out, owner[binary.BigEndian.Uint32(wal[off:])])
		if binary.BigEndian.Uint32(wal[off+4:]) != 0 {
			out = append(out, "COMMIT")
		}
	}
	return out
}

// TestAJobWritesOnlyThePagesItNeeds: a job's create and its settle each
// rewrite every page they touch into the log, and a page costs a 4 KiB
// frame. A job without a queue group writes no page of the group index,
// and the roll-up is one b-tree (no separate index of its key); a grouped
// job does enter the group index, so the check sees it when it is there.
func TestAJobWritesOnlyThePagesItNeeds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	s := openTest(t, jobstore.Options{Path: path})
	db := openRaw(t, path)
	lifecycle := func(group string) []string {
		j := newJob("s")
		j.Group = group
		now := time.Now()
		j.PID, j.PGID, j.StartedAt = 1, 1, &now
		// The log starts empty, so it holds this job's writes alone.
		_, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		require.NoError(t, err)
		require.NoError(t, s.Create(ctx, j))
		code := 0
		_, err = s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code,
			FinishedAt: time.Now(),
			Artifacts: []bgcmd.Artifact{{Stream: bgcmd.Stdout, SHA256: strings.Repeat("a", 64)},
				{Stream: bgcmd.Stderr, SHA256: strings.Repeat("b", 64)}}})
		require.NoError(t, err)
		return walTrees(t, db, path)
	}
	lifecycle("") // the first job of a session also creates its rows

	plain := lifecycle("")
	require.Equal(t, 2, count(plain, "COMMIT"), "a create and a settle: %v", plain)
	require.NotContains(t, plain, "jobs_group_running", "a job without a group: %v", plain)
	require.NotContains(t, plain, "sqlite_autoindex_job_hours_1", "the roll-up is keyed by its primary key: %v", plain)
	require.Equal(t, 2, count(plain, "job_hours"), "the roll-up, once a transaction: %v", plain)
	require.LessOrEqual(t, len(plain)-2, 30, "pages written by a create and a settle: %v", plain)

	grouped := lifecycle("builds")
	require.Equal(t, 2, count(grouped, "jobs_group_running"), "a grouped job enters the index and leaves it: %v", grouped)
}

func count(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// TestPagesMigrationKeepsTheRollUpAndTheGroupCounts: a store migrated
// down past 00017 and up again keeps every row of job_hours, which is
// keyed by its primary key once up and a rowid table once down; the
// writes that keep it go on doing so; and the running jobs of a group
// are counted as before, from an index that holds the grouped ones only.
func TestPagesMigrationKeepsTheRollUpAndTheGroupCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	start := time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)
	clock := start
	s, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host", Now: func() time.Time { return clock }})
	require.NoError(t, err)
	for i := range 30 {
		j := newJob("s", []string{"/usr/bin/make", "/usr/bin/go"}[i%2])
		if i%3 == 0 {
			j.Group = "builds"
		}
		require.NoError(t, s.Create(ctx, j))
		require.NoError(t, s.MarkStarted(ctx, jobstore.StartedParams{ID: j.ID, PID: 1, PGID: 1, StartedAt: clock}))
		if i%4 != 0 {
			code := i % 2
			_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code,
				FinishedAt: clock.Add(time.Duration(i+1) * time.Second)})
			require.NoError(t, err)
		}
		clock = clock.Add(20 * time.Minute)
	}
	require.NoError(t, s.Close())
	raw := openRaw(t, path)
	before := readRollup(t, raw, hoursTable)
	require.NotEmpty(t, before)
	groupCount := `SELECT COUNT(*) FROM jobs INDEXED BY jobs_group_running
		WHERE state = 'running' AND queue_group <> '' AND queue_group = 'builds'`
	var running int
	require.NoError(t, raw.QueryRow(groupCount).Scan(&running))
	require.Equal(t, 3, running, "jobs 0, 12 and 24 run in the group")
	entries := func() int {
		var n int
		require.NoError(t, raw.QueryRow(`SELECT SUM(ncell) FROM dbstat WHERE name = 'jobs_group_running' AND pagetype = 'leaf'`).Scan(&n))
		return n
	}
	require.Equal(t, 3, entries(), "the index holds the grouped running jobs, not the 5 others that run")
	tableSQL := func() string {
		var q string
		require.NoError(t, raw.QueryRow(`SELECT sql FROM sqlite_schema WHERE name = 'job_hours'`).Scan(&q))
		return q
	}
	require.Contains(t, tableSQL(), "WITHOUT ROWID")

	require.NoError(t, raw.Close())
	require.NoError(t, jobstore.MigrateDownTo(ctx, path, 16))
	raw = openRaw(t, path)
	require.NotContains(t, tableSQL(), "WITHOUT ROWID", "down: a rowid table again")
	require.Equal(t, before, readRollup(t, raw, hoursTable), "down")
	require.Equal(t, 8, entries(), "down: every running job in the index")
	require.NoError(t, raw.Close())

	s = openTest(t, jobstore.Options{Path: path, Now: func() time.Time { return clock }})
	raw = openRaw(t, path)
	require.Contains(t, tableSQL(), "WITHOUT ROWID", "up again")
	require.Equal(t, before, readRollup(t, raw, hoursTable), "up again")
	require.Equal(t, 3, entries(), "up again: the grouped running jobs alone")
	// The store's writes still keep the roll-up, in the renamed table.
	j := newJob("s", "/usr/bin/make")
	require.NoError(t, s.Create(ctx, j))
	require.NoError(t, s.MarkStarted(ctx, jobstore.StartedParams{ID: j.ID, PID: 1, PGID: 1, StartedAt: clock}))
	code := 0
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code, FinishedAt: clock.Add(time.Second)})
	require.NoError(t, err)
	requireRollupMatchesScan(t, s, raw, start, clock.Add(time.Hour), "after the migration")
	require.NoError(t, raw.QueryRow(groupCount).Scan(&running))
	require.Equal(t, 3, running)
}

// hoursTable reads job_hours as it is stored (a stale maximum as it is).
const hoursTable = `SELECT hour, outcome, exe, jobs, ran, ms_sum, ms_max FROM job_hours ORDER BY hour, outcome, exe`
