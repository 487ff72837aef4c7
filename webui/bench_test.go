//go:build linux

package webui_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/webui"
)

// The page benchmarks serve each page of the view from a store of
// 1,000,000 jobs (one every 30 s over a year, five executables, ten
// sessions, a tenth labelled) whose newest job has banked a big log
// (BGCMD_BENCH_LOG_MB MiB, default 1024, written once per run through a
// real Capture and banked as the runner banks). Each iteration times the
// page and, beside it, the same store query or reader call alone (the
// baseline); they report both means, the worst page, and page ÷ baseline.

const (
	benchJobs   = 1_000_000
	benchEvery  = 30 * time.Second
	benchBigJob = "000003e7-0000-7000-8000-000000999999" // the newest job
)

var benchBase = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

var bench struct {
	once  sync.Once
	err   error
	home  string
	sum   artifacts.Summary
	store *jobstore.Store
	srv   *webui.Server
}

// benchNow is one minute after the newest job was created.
func benchNow() time.Time { return benchBase.Add(time.Duration(benchJobs-1)*benchEvery + time.Minute) }

func benchHome(b *testing.B) {
	b.Helper()
	bench.once.Do(func() { bench.err = buildBenchHome() })
	if bench.err != nil {
		b.Fatal(bench.err)
	}
}

func buildBenchHome() error {
	ctx := context.Background()
	home, err := os.MkdirTemp("", "bgcmd-ui-bench-")
	if err != nil {
		return err
	}
	bench.home = home
	dbPath := filepath.Join(home, "bgcmd.db")
	st, err := jobstore.Open(ctx, jobstore.Options{Path: dbPath, Host: "bench-host"})
	if err != nil {
		return err
	}
	st.Close()
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1),
		j(i, exe, t) AS (SELECT i, CASE i % 5 WHEN 0 THEN '/usr/bin/make' WHEN 1 THEN '/usr/bin/go'
			WHEN 2 THEN '/usr/bin/git' WHEN 3 THEN '/usr/bin/cargo' ELSE '/usr/bin/npm' END,
			? + i * ? FROM n)
		INSERT INTO jobs (id, session, host, argv, exe, cwd, timeout_ms, kill_grace_ms,
			max_output_bytes, labels, state, exit_code, created_at, started_at, finished_at, seen_at)
		SELECT printf('%08x-0000-7000-8000-%012d', i / 1000, i), 's' || (i % 10), 'bench-host',
			json_array(exe, 'build', 'target-' || i), exe, '/srv/checkout', 600000, 5000, 1048576,
			CASE WHEN i % 10 = 0 THEN '{"ci":"yes"}' ELSE '{}' END,
			CASE WHEN i % 1000 = 7 THEN 'running' WHEN i % 50 = 3 THEN 'timeout' ELSE 'exited' END,
			CASE WHEN i % 1000 = 7 OR i % 50 = 3 THEN NULL WHEN i % 20 = 1 THEN 1 ELSE 0 END,
			strftime('%Y-%m-%dT%H:%M:%S.000000000Z', t, 'unixepoch'),
			strftime('%Y-%m-%dT%H:%M:%S.000000000Z', t, 'unixepoch'),
			CASE WHEN i % 1000 = 7 THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%S.000000000Z', t + 1 + i % 97 + (i % 5) * 20, 'unixepoch') END,
			CASE WHEN i % 1000 IN (7, 17) THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%S.000000000Z', t + 200, 'unixepoch') END
		FROM j`, benchJobs, benchBase.Unix(), int64(benchEvery/time.Second))
	if err != nil {
		return fmt.Errorf("fill jobs: %w", err)
	}
	// The roll-ups the charts read, as bgcmd's own writes would have kept
	// them (what `bgcmd reconcile --recount` does after a fill by SQL).
	if st, err = jobstore.Open(ctx, jobstore.Options{Path: dbPath, Host: "bench-host"}); err != nil {
		return err
	}
	err = st.Recount(ctx)
	st.Close()
	if err != nil {
		return err
	}
	// The big log, written through a real capture and banked.
	mb := int64(1024)
	if s := os.Getenv("BGCMD_BENCH_LOG_MB"); s != "" {
		if mb, err = strconv.ParseInt(s, 10, 64); err != nil {
			return fmt.Errorf("BGCMD_BENCH_LOG_MB: %w", err)
		}
	}
	jobDir := filepath.Join(home, "jobs", benchBigJob)
	if err := os.MkdirAll(jobDir, 0o700); err != nil {
		return err
	}
	logPath := filepath.Join(jobDir, "stdout.log")
	c, err := artifacts.NewCapture(artifacts.CaptureOptions{Path: logPath})
	if err != nil {
		return err
	}
	var chunk bytes.Buffer
	for i := 0; i < 4000; i++ {
		fmt.Fprintf(&chunk, "2026-01-02T15:04:05.%06dZ INFO worker %d: compiled pkg/%d in %dms ✓ <b>%d</b>\n", i, i%8, i, i*7, i)
	}
	for c.Written() < mb<<20 {
		if _, err := c.Write(chunk.Bytes()); err != nil {
			return err
		}
	}
	if err := c.Close(); err != nil {
		return err
	}
	sum := c.Summary()
	arts := &artifacts.Store{Dir: filepath.Join(home, "artifacts")}
	if bench.sum, _, err = arts.Bank(logPath, &sum); err != nil {
		return err
	}
	_, err = db.Exec(`INSERT INTO artifacts (id, job_id, stream, sha256, bytes, chars, lines, capped, created_at)
		VALUES ('a-big', ?, 'stdout', ?, ?, ?, ?, 0, '2025-12-14T00:00:00.000000000Z')`,
		benchBigJob, bench.sum.SHA256, bench.sum.Bytes, bench.sum.Chars, bench.sum.Lines)
	if err != nil {
		return err
	}
	_, err = db.Exec(`INSERT INTO job_events (job_id, from_state, to_state, at, detail) VALUES
		(?, NULL, 'running', '2025-12-14T00:00:00.000000000Z', '{}'),
		(?, 'running', 'exited', '2025-12-14T00:10:00.000000000Z', '{"leftover_processes_killed":0}')`, benchBigJob, benchBigJob)
	if err != nil {
		return err
	}
	if _, err := db.Exec(`ANALYZE`); err != nil {
		return err
	}
	if bench.store, err = jobstore.OpenReadOnly(ctx, dbPath); err != nil {
		return err
	}
	bench.srv, err = webui.New(webui.Options{Store: bench.store, Home: home, Token: testToken, Now: benchNow})
	return err
}

// TestMain removes the benchmark home after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if bench.store != nil {
		bench.store.Close()
	}
	if bench.home != "" {
		os.RemoveAll(bench.home)
	}
	os.Exit(code)
}

// benchPage times GET path against the baseline, interleaved, b.N times
// each, and reports the mean wall time of each (ms/page, ms/baseline), the
// worst page, page ÷ baseline, and the process CPU time of each
// (cpu-ms/page, cpu-ms/baseline): on a busy machine the wall time is
// mostly waiting for a core, the CPU time is the work.
func benchPage(b *testing.B, path string, baseline func() error) {
	benchHome(b)
	serve := func() {
		req := httptest.NewRequest(http.MethodGet, testView+path, nil)
		req.AddCookie(&http.Cookie{Name: testCookie, Value: testToken})
		rec := httptest.NewRecorder()
		bench.srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
		}
	}
	serve() // warm: the page's first read loads the index files
	require.NoError(b, baseline())
	var page, base, worst, pageCPU, baseCPU time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0, t0 := processCPU(), time.Now()
		if err := baseline(); err != nil {
			b.Fatal(err)
		}
		c1, t1 := processCPU(), time.Now()
		serve()
		d, c2 := time.Since(t1), processCPU()
		base += t1.Sub(t0)
		page += d
		worst = max(worst, d)
		baseCPU += c1 - c0
		pageCPU += c2 - c1
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(ms(page), "ms/page")
	b.ReportMetric(ms(base), "ms/baseline")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms/page")
	b.ReportMetric(float64(page)/float64(max(base, 1)), "page/baseline")
	b.ReportMetric(ms(pageCPU), "cpu-ms/page")
	b.ReportMetric(ms(baseCPU), "cpu-ms/baseline")
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// jobsPageQueries are the store reads of a jobs page: the page of jobs,
// the counters and the last day's outcomes.
func jobsPageQueries(p jobstore.FilterParams) error {
	ctx := context.Background()
	if _, err := bench.store.Filter(ctx, p); err != nil {
		return err
	}
	now := benchNow()
	if _, err := bench.store.Overview(ctx, now.Add(-24*time.Hour)); err != nil {
		return err
	}
	_, err := bench.store.RecentOutcomes(ctx, 1000)
	return err
}

// BenchmarkJobsPageAtMillion: the newest 50 jobs with the counters and
// the outcomes of the newest 1000; baseline, the same store queries alone.
func BenchmarkJobsPageAtMillion(b *testing.B) {
	benchPage(b, "/", func() error {
		return jobsPageQueries(jobstore.FilterParams{ListParams: jobstore.ListParams{Limit: 50}})
	})
}

// BenchmarkJobsPageFilteredAtMillion: one session's exited jobs carrying
// a label, one week back; baseline, the same store queries alone.
func BenchmarkJobsPageFilteredAtMillion(b *testing.B) {
	p := jobstore.FilterParams{ListParams: jobstore.ListParams{Limit: 50, Session: "s0",
		States: []bgcmd.State{bgcmd.StateExited}, Since: benchNow().Add(-7 * 24 * time.Hour)},
		LabelKey: "ci", LabelValue: "yes"}
	benchPage(b, "/?state=exited&session=s0&label=ci%3Dyes&since=168h", func() error {
		return jobsPageQueries(p)
	})
}

// BenchmarkJobPageAtMillion: the job page of the big-log job; baseline,
// its row, events and artifacts read alone.
func BenchmarkJobPageAtMillion(b *testing.B) {
	benchPage(b, "/jobs/"+benchBigJob, func() error {
		ctx := context.Background()
		if _, err := bench.store.Get(ctx, benchBigJob); err != nil {
			return err
		}
		if _, err := bench.store.Events(ctx, benchBigJob); err != nil {
			return err
		}
		_, err := bench.store.Artifacts(ctx, benchBigJob)
		return err
	})
}

// bigSource is the banked big log.
func bigSource() artifacts.Source {
	p := (&artifacts.Store{Dir: filepath.Join(bench.home, "artifacts")}).Path(bench.sum.SHA256)
	return artifacts.Source{Path: p, Final: true}
}

// BenchmarkOutputPageBigLog: 200 lines at 99.9% of the big log; baseline,
// artifacts.Read of the same page alone.
func BenchmarkOutputPageBigLog(b *testing.B) {
	benchHome(b)
	offset := bench.sum.Lines - bench.sum.Lines/1000
	benchPage(b, fmt.Sprintf("/jobs/%s/output?offset=%d&limit=200", benchBigJob, offset), func() error {
		_, err := artifacts.Read(bigSource(), artifacts.Page{Unit: artifacts.UnitLines, Offset: offset, Limit: 200})
		return err
	})
}

// BenchmarkOutputTailBigLog: the last 200 lines of the big log; baseline,
// artifacts.Read of the same tail alone.
func BenchmarkOutputTailBigLog(b *testing.B) {
	benchPage(b, "/jobs/"+benchBigJob+"/output?tail=200", func() error {
		_, err := artifacts.Read(bigSource(), artifacts.Page{Tail: 200})
		return err
	})
}

// BenchmarkChartsPageAtMillion: both charts over the last day; baseline,
// their query alone.
func BenchmarkChartsPageAtMillion(b *testing.B) {
	benchPage(b, "/charts", func() error {
		ctx := context.Background()
		end := benchNow().Truncate(time.Hour).Add(time.Hour)
		_, err := bench.store.Charts(ctx, end.Add(-24*time.Hour), end, 10)
		return err
	})
}

// BenchmarkChartsWeekAtMillion: the charts over the last week (20,000
// jobs aggregated); baseline, their query alone.
func BenchmarkChartsWeekAtMillion(b *testing.B) {
	benchPage(b, "/charts?window=week", func() error {
		ctx := context.Background()
		end := benchNow().Truncate(time.Hour).Add(time.Hour)
		_, err := bench.store.Charts(ctx, end.Add(-7*24*time.Hour), end, 10)
		return err
	})
}
