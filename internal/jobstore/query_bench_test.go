package jobstore_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// The query benchmarks run at 1,000,000 jobs. Each of bgcmd's queries has
// its own baseline: the very same SELECT with the indexes switched off
// (NOT INDEXED), on the same table, which SQLite answers by scanning it.

var (
	millionOnce sync.Once
	// millionPath is the store's file, in a directory of its own (see
	// seededStore) that TestMain removes.
	millionPath string
)

// millionJobs builds (once per process) a store with 1,000,000 jobs over 10
// sessions: mostly exited and seen, some failed, a few running or unread.
func millionJobs(b *testing.B) string {
	millionOnce.Do(func() {
		millionPath = seededStore(b, "bgcmd-bench-")
		db := openRaw(b, millionPath)
		_, err := db.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999999)
			INSERT INTO jobs (id, session, host, argv, exe, cwd, timeout_ms, kill_grace_ms,
				max_output_bytes, state, exit_code, created_at, finished_at, seen_at)
			SELECT printf('%08x-0000-7000-8000-%012d', i / 1000, i), 's' || (i % 10), 'test-host',
				'["/usr/bin/make"]', '/usr/bin/make', '/', 60000, 5000, 1048576,
				CASE WHEN i % 1000 = 7 THEN 'running' WHEN i % 50 = 3 THEN 'timeout' ELSE 'exited' END,
				CASE WHEN i % 1000 = 7 THEN NULL WHEN i % 20 = 1 THEN 1 ELSE 0 END,
				'2026-01-01T00:00:00.000000000Z', '2026-01-01T00:00:01.000000000Z',
				CASE WHEN i % 1000 = 17 OR i % 1000 = 7 THEN NULL ELSE '2026-01-01T00:00:02.000000000Z' END
			FROM n`)
		require.NoError(b, err)
		_, err = db.Exec(`ANALYZE`)
		require.NoError(b, err)
		recountSeeded(b, millionPath)
	})
	return millionPath
}

// seededStore makes a store, migrated, in a new temporary directory named
// after prefix (the caller removes it), and returns its path, for a
// benchmark to fill with rows by SQL.
func seededStore(b *testing.B, prefix string) string {
	dir, err := os.MkdirTemp("", prefix)
	require.NoError(b, err)
	path := filepath.Join(dir, "bgcmd.db")
	s, err := jobstore.Open(context.Background(), jobstore.Options{Path: path, Host: "test-host"})
	require.NoError(b, err)
	require.NoError(b, s.Close())
	return path
}

// recountSeeded rebuilds the roll-ups of a store filled by SQL, as a
// store whose jobs bgcmd wrote has them (what `bgcmd reconcile --recount`
// does after a write by hand).
func recountSeeded(b *testing.B, path string) {
	s, err := jobstore.Open(context.Background(), jobstore.Options{Path: path, Host: "test-host"})
	require.NoError(b, err)
	require.NoError(b, s.Recount(context.Background()))
	require.NoError(b, s.Close())
}

// BenchmarkList50FailedAtMillion: the 50 newest failed (timeout) jobs of one
// session with 1,000,000 jobs in the table.
func BenchmarkList50FailedAtMillion(b *testing.B) {
	s := openTest(b, jobstore.Options{Path: millionJobs(b)})
	ctx := context.Background()
	p := jobstore.ListParams{Session: "s3", States: []bgcmd.State{bgcmd.StateTimeout}, Limit: 50}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := s.List(ctx, p)
		if err != nil || len(res.Jobs) != 50 {
			b.Fatalf("list: %v (%d jobs)", err, len(res.Jobs))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}

// list50FailedScan is List's SELECT for the benchmark above (the store asks
// for one row more than the page, to know whether another page follows),
// with the indexes switched off.
const list50FailedScan = `SELECT ` + rawJobColumns + ` FROM jobs NOT INDEXED
	WHERE state IN (?) AND session = ? ORDER BY id DESC LIMIT ?`

// BenchmarkList50FailedFullScanBaseline answers the same list with the same
// SELECT by scanning the table, reading every column of every row as List
// does.
func BenchmarkList50FailedFullScanBaseline(b *testing.B) {
	db := openRaw(b, millionJobs(b))
	args := []any{string(bgcmd.StateTimeout), "s3", 51}
	requireFullScan(b, db, list50FailedScan, args...)
	cols := make([]any, rawJobColumnCount)
	for i := range cols {
		cols[i] = new(any)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows, err := db.Query(list50FailedScan, args...)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			if err := rows.Scan(cols...); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if err := rows.Close(); err != nil || n != 51 {
			b.Fatalf("scan: %v (%d rows)", err, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}

// BenchmarkCountersAtMillion: a session's running and finished counters.
func BenchmarkCountersAtMillion(b *testing.B) {
	s := openTest(b, jobstore.Options{Path: millionJobs(b)})
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := s.Counters(ctx, "s7")
		if err != nil || c.Running != 1000 || c.Finished != 1000 {
			b.Fatalf("counters: %v %+v", err, c)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}

// BenchmarkCountersBigSession: the counters of a session with 100,000
// unread jobs (bigSessionStore): one row of session_counters, however many
// jobs the session has.
func BenchmarkCountersBigSession(b *testing.B) {
	s := openTest(b, jobstore.Options{Path: bigSessionStore(b)})
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := s.Counters(ctx, "s")
		if err != nil || c.Finished != bigSessionJobs || c.Running != 0 {
			b.Fatalf("counters: %v %+v", err, c)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}

// BenchmarkCountersBigSessionCountBaseline reads the same counters by
// counting the session's jobs on the partial indexes, as Counters did
// before session_counters (and does on PostgreSQL): a step for each of its
// 100,000 unread jobs.
func BenchmarkCountersBigSessionCountBaseline(b *testing.B) {
	db := openRaw(b, bigSessionStore(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var running, finished, queued int
		err := db.QueryRow(jobstore.CountedCountersSQL, "s", "s", "s").Scan(&running, &finished, &queued)
		if err != nil || finished != bigSessionJobs {
			b.Fatalf("count: %v %d", err, finished)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}

// countersScan is Counters' SELECT from before session_counters with the
// indexes switched off.
const countersScan = `SELECT
		(SELECT COUNT(*) FROM jobs NOT INDEXED WHERE host = ? AND session = ? AND state = 'running'),
		(SELECT COUNT(*) FROM jobs NOT INDEXED WHERE session = ? AND state <> 'running' AND seen_at IS NULL)`

// BenchmarkCountersFullScanBaseline answers the same counters with the same
// SELECT without the partial indexes, scanning the table: what the indexes
// save.
func BenchmarkCountersFullScanBaseline(b *testing.B) {
	db := openRaw(b, millionJobs(b))
	args := []any{"test-host", "s7", "s7"}
	requireFullScan(b, db, countersScan, args...)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var running, finished int
		err := db.QueryRow(countersScan, args...).Scan(&running, &finished)
		if err != nil || running != 1000 || finished != 1000 {
			b.Fatalf("scan: %v %d %d", err, running, finished)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}

// requireFullScan fails unless SQLite plans q as scans of jobs using no
// index at all.
func requireFullScan(b *testing.B, db *sql.DB, q string, args ...any) {
	b.Helper()
	all, err := jobstore.QueryPlan(db, q, args...)
	require.NoError(b, err)
	require.Contains(b, all, "SCAN jobs", all)
	require.NotContains(b, all, "INDEX", all)
}
