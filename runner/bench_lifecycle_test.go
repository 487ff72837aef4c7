package runner_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/benchkit"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// BenchmarkLifecycleInTurn times /bin/true through bgcmd in process
// (Start, then Await until it settles), a raw exec.Command("/bin/true").Run()
// and the lifecycle's floor (lifecycleFloor), in blocks of lifecycleBlock
// jobs each way, the ways in turn, and reports each way's time per job (the
// median over the blocks, with its range; ns/op is bgcmd's). Blocks, not
// single jobs in turn: what a job leaves running once it returns (bgcmd's
// recycling of the job's directory, and the Go runtime's monitor threads of
// the host and of the reaper, which poll every 20 µs for a while after each
// burst of work) then slows the next job of its own way, as it does in a
// host running one job after another, and not the baseline. Measured in the
// same sitting, a busy neighbour slows all three ways alike; timed in
// separate benchmarks minutes apart, a ratio says as much about the
// machine's load as about bgcmd.
func BenchmarkLifecycleInTurn(b *testing.B) {
	e := benchEnv(b, false, "/bin/true")
	floor := newLifecycleFloor(b)
	ctx := context.Background()
	perJob := func(f func()) float64 {
		return float64(timed(func() {
			for range lifecycleBlock {
				f()
			}
		}).Nanoseconds()) / lifecycleBlock
	}
	var s benchkit.Samples
	b.ResetTimer()
	for i := range max(b.N, lifecycleBlocks) {
		benchkit.InTurn(i,
			func() { s.Add("ns/op", perJob(func() { lifecycle(b, ctx, e.r) })) },
			func() { s.Add("raw-ns/op", perJob(func() { rawExec(b) })) },
			func() { s.Add("floor-ns/op", perJob(func() { floor.run(b) })) },
		)
	}
	b.StopTimer()
	s.Report(b)
}

// lifecycleBlock is how many jobs BenchmarkLifecycleInTurn runs each way
// in one block, and lifecycleBlocks the fewest blocks it runs each way.
const (
	lifecycleBlock  = 25
	lifecycleBlocks = 6
)

// BenchmarkLifecycleConcurrent4InTurn runs rounds of lifecycleRound jobs
// with 4 starters: one round through bgcmd in process and one of raw
// execs, in turn, and reports each way's jobs/s (the median over the
// rounds, with its range).
func BenchmarkLifecycleConcurrent4InTurn(b *testing.B) {
	e := benchEnv(b, false, "/bin/true")
	ctx := context.Background()
	var s benchkit.Samples
	b.ResetTimer()
	for i := range benchkit.SampleCount(b) {
		benchkit.InTurn(i,
			func() {
				s.Add("jobs/s", lifecycleRound/concurrently(4, lifecycleRound, func() { lifecycle(b, ctx, e.r) }).Seconds())
			},
			func() {
				s.Add("raw-jobs/s", lifecycleRound/concurrently(4, lifecycleRound, func() { rawExec(b) }).Seconds())
			},
		)
	}
	b.StopTimer()
	s.Report(b)
}

// lifecycleRound is how many jobs one round of
// BenchmarkLifecycleConcurrent4InTurn runs each way.
const lifecycleRound = 200

// lifecycle starts /bin/true through r and awaits it, as a host does.
func lifecycle(b *testing.B, ctx context.Context, r *runner.Runner) {
	j, err := r.Start(ctx, []string{"/bin/true"}, runner.StartOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if s, err := r.Await(ctx, j.ID, time.Minute); err != nil || s.State != bgcmd.StateExited {
		b.Fatalf("job %s: %v %+v", j.ID, err, s)
	}
}

// rawExec is the baseline: exec.Command("/bin/true").Run().
func rawExec(b *testing.B) {
	if err := exec.Command("/bin/true").Run(); err != nil {
		b.Fatal(err)
	}
}

// timed returns how long f took.
func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// concurrently calls f n times from workers goroutines and returns how long
// all the calls took.
func concurrently(workers, n int, f func()) time.Duration {
	var mu sync.Mutex
	left := n
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				if left == 0 {
					mu.Unlock()
					return
				}
				left--
				mu.Unlock()
				f()
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// lifecycleFloor is the least a durable lifecycle of /bin/true can cost
// here: on a database of bgcmd's schema (made by jobstore.Open, indexes
// included) in bgcmd's SQLite regime, one prepared transaction that writes
// the job's row, its creation event and its place in the roll-ups that
// bgcmd keeps beside it (job_hours, session_counters), the command started
// with its stdout and stderr on pipes that two goroutines drain to their
// end, the wait for its exit, and one prepared transaction that settles
// the row with its event and moves it in the roll-ups. What bgcmd does
// beyond it is its own: the policy
// check, the reaper process each job runs under, the captures with their
// hashes and indexes, the exit record, the banked artifacts, the hash
// chain of the events, and the reads of Await.
type lifecycleFloor struct {
	db                      *sql.DB
	create, created, settle *sql.Stmt
	settled                 *sql.Stmt
	// The roll-ups' rows, written as plainly as they can be.
	hourIn, hourOut, counted, countSettled *sql.Stmt
}

func newLifecycleFloor(b *testing.B) *lifecycleFloor {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bgcmd.db")
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: path})
	require.NoError(b, err)
	require.NoError(b, st.Close())
	db := openWriterDB(b, path)
	f := &lifecycleFloor{db: db}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&f.create, `INSERT INTO jobs (id, session, host, host_id, argv, exe, cwd, timeout_ms, kill_grace_ms,
			max_output_bytes, state, pid, pgid, created_at, started_at)
			VALUES (?, 'floor', 'floor', 'floor', '["/bin/true"]', '/bin/true', '/', 600000, 2000, 1048576,
			'running', ?, ?, ?, ?)`},
		{&f.created, `INSERT INTO job_events (job_id, from_state, to_state, at) VALUES (?, NULL, 'running', ?)`},
		{&f.settle, `UPDATE jobs SET state = 'exited', exit_code = ?, finished_at = ? WHERE id = ? AND state = 'running'`},
		{&f.settled, `INSERT INTO job_events (job_id, from_state, to_state, at) VALUES (?, 'running', 'exited', ?)`},
		{&f.hourIn, `INSERT INTO job_hours (hour, outcome, exe, jobs, ran, ms_sum, ms_max)
			VALUES (?, ?, '/bin/true', 1, ?, ?, ?) ON CONFLICT (hour, outcome, exe) DO UPDATE SET
			jobs = jobs + 1, ran = ran + excluded.ran, ms_sum = ms_sum + excluded.ms_sum,
			ms_max = max(COALESCE(ms_max, 0), COALESCE(excluded.ms_max, 0))`},
		{&f.hourOut, `UPDATE job_hours SET jobs = jobs - 1 WHERE hour = ? AND outcome = 'running' AND exe = '/bin/true'`},
		{&f.counted, `INSERT INTO session_counters (session, running) VALUES ('floor', 1)
			ON CONFLICT (session) DO UPDATE SET running = running + 1`},
		{&f.countSettled, `UPDATE session_counters SET running = running - 1, finished = finished + 1 WHERE session = 'floor'`},
	} {
		*p.stmt, err = db.Prepare(p.sql)
		require.NoError(b, err)
	}
	return f
}

// run is one lifecycle of /bin/true at the floor.
func (f *lifecycleFloor) run(b *testing.B) {
	id := jobstore.NewID()
	now := func() string { return time.Now().UTC().Format(time.RFC3339Nano) }
	cmd := exec.Command("/bin/true")
	var drained sync.WaitGroup
	var writers []*os.File
	for _, out := range []*io.Writer{&cmd.Stdout, &cmd.Stderr} {
		r, w, err := os.Pipe()
		require.NoError(b, err)
		*out, writers = w, append(writers, w)
		drained.Go(func() {
			_, _ = io.Copy(io.Discard, r)
			r.Close()
		})
	}
	err := cmd.Start()
	for _, w := range writers {
		w.Close() // the child holds the only other copies
	}
	require.NoError(b, err)
	created, began := now(), time.Now()
	f.tx(b, func(tx *sql.Tx) error {
		if _, err := tx.Stmt(f.create).Exec(id, cmd.Process.Pid, cmd.Process.Pid, created, created); err != nil {
			return err
		}
		if _, err := tx.Stmt(f.created).Exec(id, created); err != nil {
			return err
		}
		if _, err := tx.Stmt(f.hourIn).Exec(created[:13], "running", 0, 0, nil); err != nil {
			return err
		}
		_, err := tx.Stmt(f.counted).Exec()
		return err
	})
	drained.Wait()
	require.NoError(b, cmd.Wait())
	at := now()
	f.tx(b, func(tx *sql.Tx) error {
		res, err := tx.Stmt(f.settle).Exec(cmd.ProcessState.ExitCode(), at, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("settle %s: %d rows changed (%v), want 1", id, n, err)
		}
		if _, err = tx.Stmt(f.settled).Exec(id, at); err != nil {
			return err
		}
		if _, err := tx.Stmt(f.hourOut).Exec(created[:13]); err != nil {
			return err
		}
		ms := float64(time.Since(began).Microseconds()) / 1000
		if _, err := tx.Stmt(f.hourIn).Exec(created[:13], "ok", 1, ms, ms); err != nil {
			return err
		}
		_, err = tx.Stmt(f.countSettled).Exec()
		return err
	})
}

// tx runs do in one write transaction and commits it.
func (f *lifecycleFloor) tx(b *testing.B, do func(*sql.Tx) error) {
	tx, err := f.db.Begin()
	require.NoError(b, err)
	if err := do(tx); err != nil {
		_ = tx.Rollback()
		b.Fatal(err)
	}
	require.NoError(b, tx.Commit())
}
