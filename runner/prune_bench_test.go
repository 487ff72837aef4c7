package runner_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// BenchmarkPrune prunes 100,000 settled jobs, each with its own stdout
// artifact file and index, and reports jobs/s beside the floor measured in
// the same sample on an identical store (pruneFloor): the same rows deleted
// by key and the same files unlinked, without bgcmd's selection and checks.
// Both stores are built untimed; bgcmd goes first in even samples.
func BenchmarkPrune(b *testing.B) {
	const jobs = 100_000
	ctx := context.Background()
	var s samples
	for i := range sampleCount(b) {
		ways := []func(){
			func() {
				home := b.TempDir()
				path := filepath.Join(home, "bgcmd.db")
				st, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "bench"})
				require.NoError(b, err)
				defer st.Close()
				seedSettled(b, path, filepath.Join(home, "artifacts"), jobs)
				r, err := runner.New(ctx, runner.Options{Store: st, Home: home, SkipReconcile: true})
				require.NoError(b, err)
				defer r.Close(context.Background())
				start := time.Now()
				rep, err := r.Prune(ctx, jobstore.PruneParams{FinishedBefore: time.Now()})
				took := time.Since(start)
				require.NoError(b, err)
				require.Len(b, rep.Jobs, jobs)
				require.Equal(b, 2*jobs, rep.RemovedFiles)
				s.op(took)
				s.add("jobs/s", jobs/took.Seconds())
			},
			func() {
				home := b.TempDir()
				path := filepath.Join(home, "bgcmd.db")
				st, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "bench"})
				require.NoError(b, err)
				require.NoError(b, st.Close())
				seeded := seedSettled(b, path, filepath.Join(home, "artifacts"), jobs)
				s.add("floor-jobs/s", jobs/pruneFloor(b, path, seeded).Seconds())
			},
		}
		ways[i%2]()
		ways[(i+1)%2]()
	}
	s.report(b)
}

// seededJob is one job seedSettled wrote: its id and its files.
type seededJob struct {
	id    string
	files []string
}

// seedSettled writes n settled, read jobs with their events and one unique
// stdout artifact (file and index) each, straight into the database.
func seedSettled(b *testing.B, path, artDir string, n int) []seededJob {
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
	out := make([]seededJob, 0, n)
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
		out = append(out, seededJob{id: id, files: []string{p, p + artifacts.IndexSuffix}})
	}
	require.NoError(b, tx.Commit())
	return out
}

// pruneFloor deletes the seeded jobs' rows by key, a batch of
// jobstore.DefaultPruneBatch jobs per transaction as bgcmd does (their
// artifacts, their events, the jobs), then unlinks their files, through a
// connection opened as bgcmd's writer is. It returns the time taken.
func pruneFloor(b *testing.B, path string, jobs []seededJob) time.Duration {
	db := openWriterDB(b, path)
	require.NoError(b, db.Ping())
	var rows int64
	start := time.Now()
	for from := 0; from < len(jobs); from += jobstore.DefaultPruneBatch {
		batch := jobs[from:min(from+jobstore.DefaultPruneBatch, len(jobs))]
		args := make([]any, len(batch))
		for i, j := range batch {
			args[i] = j.id
		}
		in := "(?" + strings.Repeat(", ?", len(batch)-1) + ")"
		tx, err := db.Begin()
		require.NoError(b, err)
		for _, q := range []string{`DELETE FROM artifacts WHERE job_id IN ` + in,
			`DELETE FROM job_events WHERE job_id IN ` + in, `DELETE FROM jobs WHERE id IN ` + in} {
			res, err := tx.Exec(q, args...)
			require.NoError(b, err)
			n, err := res.RowsAffected()
			require.NoError(b, err)
			rows += n
		}
		require.NoError(b, tx.Commit())
	}
	for _, j := range jobs {
		for _, f := range j.files {
			require.NoError(b, os.Remove(f))
		}
	}
	took := time.Since(start)
	require.EqualValues(b, 4*len(jobs), rows, "a job, two events and an artifact row each")
	return took
}
