package jobstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// bigSessionJobs is the number of jobs of the one session of
// bigSessionStore, each created and settled (two events).
const bigSessionJobs = 100_000

var (
	bigSessionOnce sync.Once
	// bigSessionPath is the store's file, in a directory of its own that
	// TestMain removes.
	bigSessionPath string
)

// bigSessionStore builds (once per process) a store whose one session "s"
// has bigSessionJobs settled jobs: an MCP server's session after a long
// day. Like a real store, it has no planner statistics (no ANALYZE).
func bigSessionStore(b *testing.B) string {
	bigSessionOnce.Do(func() {
		bigSessionPath = seededStore(b, "bgcmd-bench-events-")
		db := openRaw(b, bigSessionPath)
		defer db.Close()
		_, err := db.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
			INSERT INTO jobs (id, session, host, argv, exe, cwd, timeout_ms, kill_grace_ms,
				max_output_bytes, state, exit_code, created_at, finished_at)
			SELECT printf('%08x-0000-7000-8000-%012d', i / 1000, i), 's', 'test-host',
				'["/usr/bin/make"]', '/usr/bin/make', '/', 60000, 5000, 1048576, 'exited', 0,
				'2026-01-01T00:00:00.000000000Z', '2026-01-01T00:00:01.000000000Z'
			FROM n`, bigSessionJobs)
		require.NoError(b, err)
		_, err = db.Exec(`INSERT INTO job_events (job_id, from_state, to_state, at)
			SELECT id, e.from_state, e.to_state, '2026-01-01T00:00:01.000000000Z'
			FROM jobs, (SELECT NULL AS from_state, 'running' AS to_state, 0 AS k
				UNION ALL SELECT 'running', 'exited', 1) AS e
			ORDER BY id, e.k`)
		require.NoError(b, err)
		recountSeeded(b, bigSessionPath)
	})
	return bigSessionPath
}

// newestSettled is the feed's page for a session's settles after the one
// before the newest event: one new settle, as a poll woken by it reads.
func newestSettled(b *testing.B, newest int64) jobstore.EventsParams {
	b.Helper()
	return jobstore.EventsParams{Session: "s", Settled: true, After: newest - 1, Limit: 500}
}

// BenchmarkEventsPollBigSession: a session's feed of settles polled for the
// one settle just committed, the session holding 100,000 jobs.
func BenchmarkEventsPollBigSession(b *testing.B) {
	s := openTest(b, jobstore.Options{Path: bigSessionStore(b)})
	ctx := context.Background()
	newest, err := s.LatestEventSeq(ctx)
	require.NoError(b, err)
	p := newestSettled(b, newest)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		evs, next, err := s.EventsPage(ctx, p)
		if err != nil || len(evs) != 1 || next != newest {
			b.Fatalf("poll: %v (%d events, next %d of %d)", err, len(evs), next, newest)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}

// eventsPlannerOrder is the same page's SELECT as the feed ran it before
// it read new events first: the planner's own join order.
const eventsPlannerOrder = `SELECT e.seq, e.job_id, COALESCE(e.from_state, '') AS from_state,
	e.to_state, e.at, e.detail, j.session, j.exit_code, j.signal
	FROM job_events e JOIN jobs j ON j.id = e.job_id
	WHERE e.seq > ? AND j.session = ? AND e.to_state NOT IN ('running', 'queued') ORDER BY e.seq LIMIT ?`

// BenchmarkEventsPollBigSessionPlannerBaseline answers the same poll with
// the same SELECT in the planner's own join order, which starts from the
// session's jobs.
func BenchmarkEventsPollBigSessionPlannerBaseline(b *testing.B) {
	db := openRaw(b, bigSessionStore(b))
	defer db.Close()
	var newest int64
	require.NoError(b, db.QueryRow(`SELECT MAX(seq) FROM job_events`).Scan(&newest))
	p := newestSettled(b, newest)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows, err := db.Query(eventsPlannerOrder, p.After, p.Session, p.Limit)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var seq int64
			var id, from, to, at, detail, session, signal any
			var code any
			if err := rows.Scan(&seq, &id, &from, &to, &at, &detail, &session, &code, &signal); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if err := rows.Close(); err != nil || n != 1 {
			b.Fatalf("poll: %v (%d rows)", err, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}
