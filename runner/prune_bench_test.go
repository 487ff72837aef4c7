//go:build linux

package runner_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/benchkit"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// BenchmarkPrune prunes 100,000 settled jobs, each with its own stdout
// artifact file and index, and reports jobs/s beside the floor measured in
// the same sample on an identical store (pruneFloor): the same rows deleted
// by key with the same statements and the same files unlinked, without
// bgcmd's selection and checks.
// Both stores are built untimed; bgcmd goes first in even samples.
func BenchmarkPrune(b *testing.B) {
	const jobs = 100_000
	ctx := context.Background()
	var s benchkit.Samples
	for i := range benchkit.SampleCount(b) {
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
				s.Op(took)
				s.Add("jobs/s", jobs/took.Seconds())
			},
			func() {
				home := b.TempDir()
				path := filepath.Join(home, "bgcmd.db")
				st, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "bench"})
				require.NoError(b, err)
				require.NoError(b, st.Close())
				seeded := seedSettled(b, path, filepath.Join(home, "artifacts"), jobs)
				s.Add("floor-jobs/s", jobs/pruneFloor(b, path, seeded).Seconds())
			},
		}
		benchkit.InTurn(i, ways...)
	}
	s.Report(b)
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
	// The roll-ups, as bgcmd's own writes would have kept them.
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: path})
	require.NoError(b, err)
	require.NoError(b, st.Recount(context.Background()))
	require.NoError(b, st.Close())
	return out
}

// pruneFloor deletes the seeded jobs' rows by key, a batch of
// jobstore.DefaultPruneBatch jobs per transaction as bgcmd does (their
// artifacts, their events, the jobs), and unlinks their files, through a
// connection opened as bgcmd's writer is. It deletes the way bgcmd's prune
// does, so that the floor is what those statements cost and no more: the
// log checkpointed every 16 MiB and once at the end, and each batch's jobs
// taken out of the job_hours roll-up by one statement per roll-up row (its
// jobs are read: they count in no session counter). It unlinks the way bgcmd's
// prune does too (floorUnlinker): each batch's files once it has
// committed, while the next batch is deleted, several directories at once.
// It returns the time taken.
func pruneFloor(b *testing.B, path string, jobs []seededJob) time.Duration {
	db := openWriterDB(b, path)
	require.NoError(b, db.Ping())
	var rows int64
	start := time.Now()
	unlinker := startFloorUnlinker()
	_, err := db.Exec(`PRAGMA wal_autocheckpoint = 4096`)
	require.NoError(b, err)
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
			`DELETE FROM job_events WHERE job_id IN ` + in} {
			res, err := tx.Exec(q, args...)
			require.NoError(b, err)
			n, err := res.RowsAffected()
			require.NoError(b, err)
			rows += n
		}
		for _, q := range []string{floorRollOut + in + `) GROUP BY hour, outcome, exe) AS g
			WHERE job_hours.hour = g.hour AND job_hours.outcome = g.outcome AND job_hours.exe = g.exe`,
			`DELETE FROM job_hours WHERE jobs <= 0 AND hour IN (SELECT substr(created_at, 1, 13) FROM jobs WHERE id IN ` + in + `)`} {
			_, err := tx.Exec(q, args...)
			require.NoError(b, err)
		}
		res, err := tx.Exec(`DELETE FROM jobs WHERE id IN `+in, args...)
		require.NoError(b, err)
		n, err := res.RowsAffected()
		require.NoError(b, err)
		rows += n
		require.NoError(b, tx.Commit())
		unlinker.batches <- batch
	}
	_, err = db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
	require.NoError(b, err)
	removed, err := unlinker.finish()
	took := time.Since(start)
	require.NoError(b, err)
	require.Equal(b, 2*len(jobs), removed, "a file and an index each")
	require.EqualValues(b, 4*len(jobs), rows, "a job, two events and an artifact row each")
	var left int
	require.NoError(b, db.QueryRow(`SELECT COUNT(*) FROM job_hours`).Scan(&left))
	require.Zero(b, left, "the roll-up follows the jobs out")
	return took
}

// floorRollOut is the head of pruneFloor's update of job_hours, up to the
// list of a batch's ids: the jobs of the batch per hour, outcome and
// executable, subtracted from their rows.
const floorRollOut = `UPDATE job_hours SET jobs = jobs - g.n, ran = ran - g.runs,
	ms_sum = CASE WHEN g.runs = 0 THEN ms_sum WHEN ran = g.runs THEN 0 ELSE ms_sum - g.run_ms END,
	ms_max = CASE WHEN g.runs = 0 THEN ms_max WHEN ran = g.runs THEN NULL ELSE ms_max END,
	max_stale = CASE WHEN g.runs = 0 THEN max_stale WHEN ran = g.runs THEN 0
		WHEN g.longest >= ms_max THEN 1 ELSE max_stale END
	FROM (SELECT hour, outcome, exe, COUNT(*) AS n, COUNT(ms) AS runs, TOTAL(ms) AS run_ms, MAX(ms) AS longest
		FROM (SELECT substr(created_at, 1, 13) AS hour, CASE
			WHEN state IN ('running', 'queued') THEN 'running'
			WHEN state = 'exited' AND exit_code = 0 THEN 'ok'
			WHEN state = 'exited' THEN 'failed'
			WHEN state IN ('timeout', 'killed') THEN state
			ELSE 'other' END AS outcome, exe,
			CASE WHEN started_at IS NOT NULL AND finished_at IS NOT NULL
			THEN (julianday(finished_at) - julianday(started_at)) * 86400000.0 END AS ms
			FROM jobs WHERE id IN `

// floorUnlinker is pruneFloor's unlinking, done as bgcmd's prune does its
// own with no bgcmd code: one goroutine takes each committed batch while
// the next is deleted, groups its files by directory, and unlinks them
// relative to each directory, opened once, floorUnlinkWorkers directories
// at once (bgcmd's removeWorkers).
type floorUnlinker struct {
	batches chan []seededJob
	done    chan struct{}
	removed atomic.Int64
	mu      sync.Mutex
	errs    []error
}

const floorUnlinkWorkers = 8

func startFloorUnlinker() *floorUnlinker {
	u := &floorUnlinker{batches: make(chan []seededJob, 64), done: make(chan struct{})}
	go func() {
		defer close(u.done)
		for batch := range u.batches {
			u.unlink(batch)
		}
	}()
	return u
}

// unlink removes one batch's files.
func (u *floorUnlinker) unlink(batch []seededJob) {
	byDir := map[string][]string{}
	var dirs []string
	for _, j := range batch {
		for _, f := range j.files {
			d := filepath.Dir(f)
			if byDir[d] == nil {
				dirs = append(dirs, d)
			}
			byDir[d] = append(byDir[d], filepath.Base(f))
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(floorUnlinkWorkers, len(dirs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(dirs); i = int(next.Add(1)) - 1 {
				u.unlinkIn(dirs[i], byDir[dirs[i]])
			}
		}()
	}
	wg.Wait()
}

// unlinkIn unlinks names from dir, opened once.
func (u *floorUnlinker) unlinkIn(dir string, names []string) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		u.fail(fmt.Errorf("open %s: %w", dir, err))
		return
	}
	defer syscall.Close(fd)
	for _, name := range names {
		if err := syscall.Unlinkat(fd, name); err != nil {
			u.fail(fmt.Errorf("unlink %s: %w", filepath.Join(dir, name), err))
			continue
		}
		u.removed.Add(1)
	}
}

func (u *floorUnlinker) fail(err error) {
	u.mu.Lock()
	u.errs = append(u.errs, err)
	u.mu.Unlock()
}

// finish waits for the batches sent and returns how many files went.
func (u *floorUnlinker) finish() (int, error) {
	close(u.batches)
	<-u.done
	return int(u.removed.Load()), errors.Join(u.errs...)
}
