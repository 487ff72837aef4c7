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
	"github.com/bgcmd/bgcmd/jobstore"
)

// BenchmarkTransitionsOneWriter measures one process creating and settling
// jobs: two transitions per job, each its own durable transaction.
func BenchmarkTransitionsOneWriter(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, jobstore.Options{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := newJob("bench")
		if err := s.Create(ctx, j); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "transitions/s")
}

// BenchmarkRawInsertBaseline is the floor for the above: two single-row
// autocommit writes per iteration into a bare table with the same pragmas.
func BenchmarkRawInsertBaseline(b *testing.B) {
	path := filepath.Join(b.TempDir(), "raw.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	require.NoError(b, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`CREATE TABLE t (id TEXT PRIMARY KEY, state TEXT NOT NULL)`)
	require.NoError(b, err)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := jobstore.NewID()
		if _, err := db.Exec(`INSERT INTO t (id, state) VALUES (?, 'running')`, id); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Exec(`UPDATE t SET state = 'exited' WHERE id = ? AND state = 'running'`, id); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "transitions/s")
}

// BenchmarkTransitionsEightProcesses measures 8 separate processes writing
// one file at once (b.N jobs each, two transitions per job).
func BenchmarkTransitionsEightProcesses(b *testing.B) {
	const procs = 8
	jobs := max(b.N, 50)
	path := filepath.Join(b.TempDir(), "bgcmd.db")
	s := openTest(b, jobstore.Options{Path: path}) // migrate outside the timing
	s.Close()
	b.ResetTimer()
	for i, cmd := range startWorkers(b, path, procs, jobs) {
		if err := cmd.Wait(); err != nil {
			b.Fatalf("worker %d: %v", i, err)
		}
	}
	b.ReportMetric(float64(2*procs*jobs)/b.Elapsed().Seconds(), "transitions/s")
}

var (
	millionOnce sync.Once
	millionPath string
	millionDir  string
)

// millionJobs builds (once per process) a store with 1,000,000 jobs over 10
// sessions: mostly exited and seen, some failed, a few running or unread.
func millionJobs(b *testing.B) string {
	millionOnce.Do(func() {
		var err error
		millionDir, err = os.MkdirTemp("", "bgcmd-bench-")
		require.NoError(b, err)
		millionPath = filepath.Join(millionDir, "bgcmd.db")
		s, err := jobstore.Open(context.Background(), jobstore.Options{Path: millionPath, Host: "test-host"})
		require.NoError(b, err)
		s.Close()
		db := openRaw(b, millionPath)
		_, err = db.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999999)
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
	})
	return millionPath
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

// BenchmarkCountersFullScanBaseline answers the same question without the
// partial indexes, scanning the table: what the indexes save.
func BenchmarkCountersFullScanBaseline(b *testing.B) {
	db := openRaw(b, millionJobs(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var running, finished int
		err := db.QueryRow(`SELECT
			(SELECT COUNT(*) FROM jobs NOT INDEXED WHERE session = 's7' AND state = 'running'),
			(SELECT COUNT(*) FROM jobs NOT INDEXED WHERE session = 's7' AND state <> 'running' AND seen_at IS NULL)`).
			Scan(&running, &finished)
		if err != nil || running != 1000 || finished != 1000 {
			b.Fatalf("scan: %v %d", err, running)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}
