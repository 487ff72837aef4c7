package runner_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestRetentionPruneRemovesRowsThenUnreferencedFilesOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	arts := &artifacts.Store{Dir: filepath.Join(e.home, "artifacts")}
	// Two jobs print the same thing (one shared file); one prints its own.
	a := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Session: "old"})
	b := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Session: "new"})
	c := e.start([]string{fixture(t, "exit-with.sh"), "5"}, runner.StartOptions{Session: "old"})
	sa, sb, sc := e.await(a.ID), e.await(b.ID), e.await(c.ID)
	require.Equal(t, sa.Stdout.SHA256, sb.Stdout.SHA256)

	dry, err := e.r.Prune(ctx, jobstore.PruneParams{Session: "old", DryRun: true})
	require.NoError(t, err)
	require.Len(t, dry.Jobs, 2, "await read both jobs, so neither is unread")
	require.Len(t, dry.Unreferenced, 2, "c's two streams; a's files are shared with b")
	require.Equal(t, sc.Stdout.Bytes+sc.Stderr.Bytes, dry.FreedBytes)
	require.Zero(t, dry.RemovedFiles)
	require.True(t, exists(arts.Path(sc.Stdout.SHA256)), "a dry run removes nothing")

	rep, err := e.r.Prune(ctx, jobstore.PruneParams{Session: "old"})
	require.NoError(t, err)
	require.Len(t, rep.Jobs, 2)
	require.Equal(t, 2, rep.RemovedFiles, "two logs; logs shorter than one index stride have no index file")
	require.False(t, exists(arts.Path(sc.Stdout.SHA256)))
	require.False(t, exists(arts.Path(sc.Stderr.SHA256)+artifacts.IndexSuffix))
	require.True(t, exists(arts.Path(sa.Stdout.SHA256)), "b still references the shared file")
	require.Equal(t, "out: exiting with 0\n", e.output(b.ID, bgcmd.Stdout))
	_, err = e.r.Status(ctx, a.ID)
	require.ErrorIs(t, err, bgcmd.ErrNotFound)
}

func TestRetentionGCRemovesStrayFilesAndLeftoverDirsButNotLiveOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	done := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
	kept := e.await(done.ID)
	flag := filepath.Join(t.TempDir(), "go")
	live := e.start([]string{fixture(t, "wait-for-file.sh"), flag, "0"}, runner.StartOptions{})

	// A crash between prune's commit and its file removal, and a supervisor
	// that died after settling but before removing its directory.
	arts := &artifacts.Store{Dir: filepath.Join(e.home, "artifacts")}
	sum := sha256.Sum256([]byte("stray"))
	stray := arts.Path(hex.EncodeToString(sum[:]))
	require.NoError(t, os.MkdirAll(filepath.Dir(stray), 0o755))
	require.NoError(t, os.WriteFile(stray, []byte("stray"), 0o600))
	require.NoError(t, os.WriteFile(stray+artifacts.IndexSuffix, []byte("idx"), 0o600))
	tmp := filepath.Join(filepath.Dir(stray), ".bank-123.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("partial"), 0o600))
	leftSettled := filepath.Join(e.home, "jobs", done.ID)
	leftUnknown := filepath.Join(e.home, "jobs", "0190aaaa-0000-7000-8000-000000000000")
	for _, d := range []string{leftSettled, leftUnknown} {
		require.NoError(t, os.MkdirAll(d, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(d, "stdout.log"), []byte("12345"), 0o600))
	}

	rep, err := e.r.GC(ctx, runner.GCOptions{MinAge: time.Hour})
	require.NoError(t, err)
	require.Empty(t, rep.StrayFiles, "everything is younger than an hour")
	require.Empty(t, rep.JobDirs)
	require.Equal(t, 5, rep.SkippedRecent)

	dry, err := e.r.GC(ctx, runner.GCOptions{DryRun: true})
	require.NoError(t, err)
	require.Len(t, dry.StrayFiles, 3)
	require.True(t, exists(stray), "a dry run removes nothing")

	rep, err = e.r.GC(ctx, runner.GCOptions{})
	require.NoError(t, err)
	require.Len(t, rep.StrayFiles, 3)
	require.Len(t, rep.JobDirs, 2)
	require.Equal(t, int64(len("stray")+len("idx")+len("partial")+10), rep.FreedBytes)
	for _, p := range []string{stray, stray + artifacts.IndexSuffix, tmp, leftSettled, leftUnknown} {
		require.False(t, exists(p), p)
	}
	require.True(t, exists(arts.Path(kept.Stdout.SHA256)), "referenced artifacts stay")
	require.True(t, exists(filepath.Join(e.home, "jobs", live.ID)), "a running job's directory stays")

	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	require.Equal(t, "waiting\ndone\n", func() string { e.await(live.ID); return e.output(live.ID, bgcmd.Stdout) }())
}

// BenchmarkPrune prunes 100,000 settled jobs, each with its own stdout
// artifact file, and reports jobs/s beside a baseline measured in the same
// run: one plain DELETE of as many rows from a raw table.
func BenchmarkPrune(b *testing.B) {
	const jobs = 100_000
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		home := b.TempDir()
		path := filepath.Join(home, "bgcmd.db")
		st, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "bench"})
		require.NoError(b, err)
		seedSettled(b, path, filepath.Join(home, "artifacts"), jobs)
		r, err := runner.New(ctx, runner.Options{Store: st, Home: home, SkipReconcile: true})
		require.NoError(b, err)
		base := rawDelete(b, filepath.Join(home, "raw.db"), jobs)

		b.StartTimer()
		start := time.Now()
		rep, err := r.Prune(ctx, jobstore.PruneParams{FinishedBefore: time.Now()})
		elapsed := time.Since(start)
		b.StopTimer()
		require.NoError(b, err)
		require.Len(b, rep.Jobs, jobs)
		require.Equal(b, 2*jobs, rep.RemovedFiles)

		b.ReportMetric(jobs/elapsed.Seconds(), "jobs/s")
		b.ReportMetric(jobs/base.Seconds(), "baseline_rows/s")
		b.ReportMetric(elapsed.Seconds()/base.Seconds(), "x_baseline")
		require.NoError(b, st.Close())
	}
}

// seedSettled writes n settled, read jobs with their events and one unique
// stdout artifact (file and index) each, straight into the database.
func seedSettled(b *testing.B, path, artDir string, n int) {
	b.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	require.NoError(b, err)
	defer db.Close()
	tx, err := db.Begin()
	require.NoError(b, err)
	job, err := tx.Prepare(`INSERT INTO jobs (id, session, host, argv, exe, cwd, timeout_ms,
		kill_grace_ms, max_output_bytes, state, exit_code, created_at, started_at, finished_at, seen_at)
		VALUES (?, 'bench', 'bench', '["/bin/true"]', '/bin/true', '/', 60000, 1000, 1024, 'exited', 0, ?, ?, ?, ?)`)
	require.NoError(b, err)
	ev, err := tx.Prepare(`INSERT INTO job_events (job_id, from_state, to_state, at) VALUES (?, ?, ?, ?)`)
	require.NoError(b, err)
	art, err := tx.Prepare(`INSERT INTO artifacts (id, job_id, stream, sha256, bytes, chars, lines, created_at)
		VALUES (?, ?, 'stdout', ?, ?, ?, 1, ?)`)
	require.NoError(b, err)
	store := &artifacts.Store{Dir: artDir}
	at := time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
	for i := range n {
		id := jobstore.NewID()
		content := []byte(fmt.Sprintf("job %d\n", i))
		sum := sha256.Sum256(content)
		sha := hex.EncodeToString(sum[:])
		_, err = job.Exec(id, at, at, at, at)
		require.NoError(b, err)
		_, err = ev.Exec(id, nil, "running", at)
		require.NoError(b, err)
		_, err = ev.Exec(id, "running", "exited", at)
		require.NoError(b, err)
		_, err = art.Exec(jobstore.NewID(), id, sha, len(content), len(content), at)
		require.NoError(b, err)
		p := store.Path(sha)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			require.NoError(b, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(b, os.WriteFile(p, content, 0o644))
		}
		require.NoError(b, os.WriteFile(p+artifacts.IndexSuffix, nil, 0o644))
	}
	require.NoError(b, tx.Commit())
}

// rawDelete times one plain DELETE of n rows from a table with a text
// primary key, in its own database file.
func rawDelete(b *testing.B, path string, n int) time.Duration {
	b.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	require.NoError(b, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`CREATE TABLE raw (id TEXT PRIMARY KEY, payload TEXT NOT NULL)`)
	require.NoError(b, err)
	tx, err := db.Begin()
	require.NoError(b, err)
	ins, err := tx.Prepare(`INSERT INTO raw (id, payload) VALUES (?, ?)`)
	require.NoError(b, err)
	for i := range n {
		_, err := ins.Exec(jobstore.NewID(), fmt.Sprintf("row %d", i))
		require.NoError(b, err)
	}
	require.NoError(b, tx.Commit())
	start := time.Now()
	res, err := db.Exec(`DELETE FROM raw`)
	elapsed := time.Since(start)
	require.NoError(b, err)
	got, err := res.RowsAffected()
	require.NoError(b, err)
	require.Equal(b, int64(n), got)
	return elapsed
}
