package jobstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/testkit"
)

// The query benchmarks at 1,000,000 jobs on PostgreSQL, to read beside
// the SQLite ones of the same run: the same jobs, the same store code.

var (
	millionPGOnce sync.Once
	millionPGDSN  string
	millionPGDrop func()
)

// millionJobsPostgres builds (once per process) a database holding the
// jobs millionJobs holds, on the server BGCMD_TEST_PG names (skipped
// without it), with one INSERT … SELECT over generate_series. The database
// outlives each benchmark; TestMain drops it (dropMillionPostgres).
func millionJobsPostgres(b *testing.B) string {
	server := testkit.PostgresServer(b)
	millionPGOnce.Do(func() {
		admin, err := sql.Open("pgx", server)
		require.NoError(b, err)
		name := make([]byte, 6)
		_, _ = rand.Read(name)
		db := "bgcmd_bench_" + hex.EncodeToString(name)
		_, err = admin.Exec(`CREATE DATABASE ` + db)
		require.NoError(b, err)
		millionPGDrop = func() {
			_, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + db + ` WITH (FORCE)`)
			admin.Close()
		}
		u, err := url.Parse(server)
		require.NoError(b, err)
		u.Path = "/" + db
		millionPGDSN = u.String()
		ctx := context.Background()
		s, err := jobstore.Open(ctx, jobstore.Options{DSN: millionPGDSN, Host: "test-host", HostID: "bench-host"})
		require.NoError(b, err)
		s.Close()
		raw, err := jobstore.OpenRawPostgres(ctx, millionPGDSN)
		require.NoError(b, err)
		defer raw.Close()
		_, err = raw.ExecContext(ctx, `INSERT INTO jobs (id, session, host, host_id, argv, exe, cwd, timeout_ms, kill_grace_ms,
				max_output_bytes, state, exit_code, created_at, finished_at, seen_at)
			SELECT lpad(to_hex(i / 1000), 8, '0') || '-0000-7000-8000-' || lpad(i::text, 12, '0'), 's' || (i % 10),
				'test-host', 'bench-host', '["/usr/bin/make"]', '/usr/bin/make', '/', 60000, 5000, 1048576,
				CASE WHEN i % 1000 = 7 THEN 'running' WHEN i % 50 = 3 THEN 'timeout' ELSE 'exited' END,
				CASE WHEN i % 1000 = 7 THEN NULL WHEN i % 20 = 1 THEN 1 ELSE 0 END,
				'2026-01-01T00:00:00.000000000Z', '2026-01-01T00:00:01.000000000Z',
				CASE WHEN i % 1000 = 17 OR i % 1000 = 7 THEN NULL ELSE '2026-01-01T00:00:02.000000000Z' END
			FROM generate_series(0, 999999) AS i`)
		require.NoError(b, err)
		_, err = raw.Exec(`VACUUM ANALYZE jobs`)
		require.NoError(b, err)
	})
	if millionPGDSN == "" {
		b.Fatal("the million-job PostgreSQL database could not be built (see the first benchmark's failure)")
	}
	return millionPGDSN
}

// dropMillionPostgres drops the database millionJobsPostgres built, if any.
func dropMillionPostgres() {
	if millionPGDrop != nil {
		millionPGDrop()
	}
}

// BenchmarkList50FailedAtMillionPostgres is BenchmarkList50FailedAtMillion
// on PostgreSQL.
func BenchmarkList50FailedAtMillionPostgres(b *testing.B) {
	s := openTest(b, jobstore.Options{DSN: millionJobsPostgres(b), Host: "test-host", HostID: "bench-host"})
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

// BenchmarkCountersAtMillionPostgres is BenchmarkCountersAtMillion on
// PostgreSQL.
func BenchmarkCountersAtMillionPostgres(b *testing.B) {
	s := openTest(b, jobstore.Options{DSN: millionJobsPostgres(b), Host: "test-host", HostID: "bench-host"})
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
