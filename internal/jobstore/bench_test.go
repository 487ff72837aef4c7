package jobstore_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// The transition benchmarks compare bgcmd's Create and Settle with the same
// statements run on the same migrated schema through a bare database/sql
// connection opened with the store writer's pragmas: what bgcmd's code
// around the SQL costs. The 8-process pair starts its 8 processes, lets each
// open the database and waits until all are ready before timing starts.

// BenchmarkTransitionsOneWriter measures one process creating and settling
// jobs: two transitions per job, each its own durable transaction.
func BenchmarkTransitionsOneWriter(b *testing.B) { benchOneWriter(b) }

// BenchmarkTransitionsOneWriterPostgres is BenchmarkTransitionsOneWriter on
// PostgreSQL (the server BGCMD_TEST_PG names; skipped without it), to read
// beside the SQLite figure of the same run.
func BenchmarkTransitionsOneWriterPostgres(b *testing.B) {
	b.Run(backendPostgres, benchOneWriter)
}

// BenchmarkTransitionsOneWriterPostgresLockApart is
// BenchmarkTransitionsOneWriterPostgres with the write lock taken in a
// statement of its own after BEGIN (one more round trip per transaction):
// what taking it in BEGIN's round trip saves.
func BenchmarkTransitionsOneWriterPostgresLockApart(b *testing.B) {
	b.Run(backendPostgres, func(b *testing.B) {
		defer jobstore.SetLockWithBegin(false)()
		benchOneWriter(b)
	})
}

// BenchmarkTransitionsEightProcessesPostgres is
// BenchmarkTransitionsEightProcesses on PostgreSQL: 8 hosts writing one
// database, serialised by the store's advisory write lock.
func BenchmarkTransitionsEightProcessesPostgres(b *testing.B) {
	b.Run(backendPostgres, func(b *testing.B) { benchEightProcesses(b, workerBgcmd) })
}

func benchOneWriter(b *testing.B) {
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

// BenchmarkTransitionsOneWriterRawBaseline is the floor for the above:
// Create's and Settle's statements, each pair in its own immediate
// transaction, on the migrated schema, with the roll-ups' rows the store
// keeps in the same transactions.
func BenchmarkTransitionsOneWriterRawBaseline(b *testing.B) {
	w := openRawWriter(b, migrated(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := jobstore.NewID()
		if err := w.create(id, "bench"); err != nil {
			b.Fatal(err)
		}
		if err := w.settle(id, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "transitions/s")
}

// BenchmarkTransitionsEightProcesses measures 8 separate processes writing
// one file at once through the store (b.N jobs each, two transitions per
// job).
func BenchmarkTransitionsEightProcesses(b *testing.B) { benchEightProcesses(b, workerBgcmd) }

// BenchmarkTransitionsEightProcessesRawBaseline: the same 8 processes
// running the same statements without the store around them.
func BenchmarkTransitionsEightProcessesRawBaseline(b *testing.B) {
	benchEightProcesses(b, workerRaw)
}

func benchEightProcesses(b *testing.B, mode string) {
	const procs = 8
	jobs := max(b.N, 50)
	b.StopTimer()
	path, dsn := migrated(b), ""
	if backendOf(b) == backendPostgres {
		dsn = backendOptions(b, jobstore.Options{}).DSN
		s, err := jobstore.Open(context.Background(), jobstore.Options{DSN: dsn, Host: "test-host"})
		require.NoError(b, err)
		require.NoError(b, s.Close())
	}
	workers := startBenchWorkers(b, path, dsn, mode, procs, jobs)
	b.StartTimer()
	start := time.Now()
	for _, w := range workers {
		require.NoError(b, w.stdin.Close()) // go
	}
	for i, w := range workers {
		if err := w.cmd.Wait(); err != nil {
			b.Fatalf("worker %d: %v", i, err)
		}
	}
	took := time.Since(start)
	b.StopTimer()
	var events int
	db := openRaw(b, path)
	if dsn != "" {
		var err error
		db, err = jobstore.OpenRawPostgres(context.Background(), dsn)
		require.NoError(b, err)
		defer db.Close()
	}
	require.NoError(b, db.QueryRow(`SELECT COUNT(*) FROM job_events`).Scan(&events))
	require.Equal(b, 2*procs*jobs, events)
	b.ReportMetric(float64(2*procs*jobs)/took.Seconds(), "transitions/s")
}

// migrated returns a fresh database file migrated by the store.
func migrated(b *testing.B) string {
	path := filepath.Join(b.TempDir(), "bgcmd.db")
	s, err := jobstore.Open(context.Background(), jobstore.Options{Path: path, Host: "test-host"})
	require.NoError(b, err)
	require.NoError(b, s.Close())
	return path
}

// The benchmark workers are this test binary run again; init turns such a
// process into a worker before the tests' TestMain runs.
const (
	benchWorkerEnv     = "BGCMD_JOBSTORE_BENCH_WORKER"
	benchWorkerDBEnv   = "BGCMD_JOBSTORE_BENCH_DB"
	benchWorkerDSNEnv  = "BGCMD_JOBSTORE_BENCH_DSN"
	benchWorkerJobsEnv = "BGCMD_JOBSTORE_BENCH_JOBS"
	benchWorkerNameEnv = "BGCMD_JOBSTORE_BENCH_NAME"
	workerBgcmd        = "bgcmd"
	workerRaw          = "raw"
)

func init() {
	mode := os.Getenv(benchWorkerEnv)
	if mode == "" {
		return
	}
	n, _ := strconv.Atoi(os.Getenv(benchWorkerJobsEnv))
	if err := runBenchWorker(mode, os.Getenv(benchWorkerDBEnv), os.Getenv(benchWorkerNameEnv), n); err != nil {
		fmt.Fprintln(os.Stderr, "bench worker:", err)
		os.Exit(workerFailCode)
	}
	os.Exit(0)
}

// runBenchWorker opens the database, says "ready" on stdout, waits for its
// stdin to close and then creates and settles jobs jobs.
func runBenchWorker(mode, path, session string, jobs int) error {
	ctx := context.Background()
	var create func(i int) (string, error)
	var settle func(id string, code int) error
	switch mode {
	case workerBgcmd:
		s, err := jobstore.Open(ctx, jobstore.Options{Path: path, DSN: os.Getenv(benchWorkerDSNEnv), Host: "test-host"})
		if err != nil {
			return err
		}
		defer s.Close()
		create = func(int) (string, error) {
			j := &bgcmd.Job{Session: session, Argv: []string{"/bin/true"}, Exe: "/bin/true", Cwd: "/"}
			err := s.Create(ctx, j)
			return j.ID, err
		}
		settle = func(id string, code int) error {
			_, err := s.Settle(ctx, jobstore.SettleParams{ID: id, To: bgcmd.StateExited, ExitCode: &code})
			return err
		}
	case workerRaw:
		w, err := newRawWriter(path)
		if err != nil {
			return err
		}
		defer w.db.Close()
		create = func(int) (string, error) {
			id := jobstore.NewID()
			return id, w.create(id, session)
		}
		settle = func(id string, code int) error { return w.settle(id, &code) }
	default:
		return fmt.Errorf("unknown worker mode %q", mode)
	}
	if _, err := fmt.Println("ready"); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		return err
	}
	for i := range jobs {
		id, err := create(i)
		if err != nil {
			return fmt.Errorf("job %d create: %w", i, err)
		}
		if err := settle(id, i%4); err != nil {
			return fmt.Errorf("job %d settle: %w", i, err)
		}
	}
	return nil
}

type benchWorker struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startBenchWorkers starts n workers on path and returns once each has
// opened the database and said so.
func startBenchWorkers(b *testing.B, path, dsn, mode string, n, jobsEach int) []benchWorker {
	b.Helper()
	workers := make([]benchWorker, n)
	for i := range workers {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), benchWorkerEnv+"="+mode, benchWorkerDBEnv+"="+path,
			benchWorkerJobsEnv+"="+strconv.Itoa(jobsEach), benchWorkerNameEnv+"="+fmt.Sprintf("w%d", i),
			benchWorkerDSNEnv+"="+dsn)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		require.NoError(b, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(b, err)
		require.NoError(b, cmd.Start())
		b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(b, err, "worker %d did not say it was ready", i)
		require.Equal(b, "ready\n", line)
		workers[i] = benchWorker{cmd: cmd, stdin: stdin}
	}
	return workers
}

// rawWriter runs the store's Create and Settle statements on a bare
// connection.
type rawWriter struct {
	db *sql.DB
	// The statements, prepared once as the store keeps its own prepared
	// on each connection: a floor that parsed its SQL in every
	// transaction would pay what the store does not.
	insertJob, insertEvent, settleJob *sql.Stmt
	// The roll-ups' rows (job_hours, session_counters) that the store
	// keeps in the same transactions, written as plainly as they can be.
	hourIn, hourOut, countIn, countSettled *sql.Stmt
}

// newRawWriter opens path as the store's writer does: the same pragmas,
// immediate transactions, one connection.
func newRawWriter(path string) (*rawWriter, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	w := &rawWriter{db: db}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&w.insertJob, rawInsertJobSQL}, {&w.insertEvent, rawInsertEventSQL}, {&w.settleJob, rawSettleSQL},
		{&w.hourIn, rawHourInSQL}, {&w.hourOut, rawHourOutSQL}, {&w.countIn, rawCountInSQL},
		{&w.countSettled, rawCountSettledSQL}} {
		if *p.stmt, err = db.Prepare(p.sql); err != nil {
			db.Close()
			return nil, err
		}
	}
	return w, nil
}

// The statements of rawWriter's transactions.
const (
	rawInsertJobSQL = `INSERT INTO jobs (id, session, host, argv, exe,
			cwd, env_replaced, env_names, timeout_ms, kill_grace_ms, max_output_bytes,
			labels, state, supervisor_pid, supervisor_start, boot_id, detached, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	rawInsertEventSQL = `INSERT INTO job_events (job_id, from_state, to_state, at, detail)
		VALUES (?, ?, ?, ?, ?)`
	rawSettleSQL = `UPDATE jobs SET state = ?, exit_code = ?, signal = ?,
		error = ?, finished_at = ? WHERE id = ? AND state = 'running'
		AND (? = 0 OR supervisor_pid = ?) RETURNING ` + rawJobColumns
	rawHourInSQL = `INSERT INTO job_hours (hour, outcome, exe, jobs, ran, ms_sum, ms_max)
		VALUES (?, ?, '/bin/true', 1, 0, 0, NULL)
		ON CONFLICT (hour, outcome, exe) DO UPDATE SET jobs = jobs + 1`
	rawHourOutSQL = `UPDATE job_hours SET jobs = jobs - 1
		WHERE hour = ? AND outcome = 'running' AND exe = '/bin/true'`
	rawCountInSQL = `INSERT INTO session_counters (session, running) VALUES (?, 1)
		ON CONFLICT (session) DO UPDATE SET running = running + 1`
	rawCountSettledSQL = `UPDATE session_counters SET running = running - 1, finished = finished + 1
		WHERE session = ?`
)

func openRawWriter(b *testing.B, path string) *rawWriter {
	w, err := newRawWriter(path)
	require.NoError(b, err)
	b.Cleanup(func() { w.db.Close() })
	return w
}

const (
	rawTimeLayout = "2006-01-02T15:04:05.000000000Z07:00"
	// rawJobColumns is what the store's Settle returns.
	rawJobColumns = `id, session, host, argv, exe, cwd, env_replaced, env_names,
	timeout_ms, kill_grace_ms, max_output_bytes, labels, state, exit_code, signal,
	error, pid, pgid, pid_start, supervisor_pid, supervisor_start, boot_id,
	detached, kill_signal, kill_requested_at, created_at, started_at,
	finished_at, seen_at`
	rawJobColumnCount = 29
	// rawCreatedAtColumn is created_at's place in rawJobColumns.
	rawCreatedAtColumn = 25
)

// create is Create's transaction: the job row and its creation event.
func (w *rawWriter) create(id, session string) error {
	at := time.Now().UTC().Format(rawTimeLayout)
	tx, err := w.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Stmt(w.insertJob).Exec(
		id, session, "test-host", `["/bin/true"]`, "/bin/true", "/", false, "[]", 60000, 1000,
		1<<20, "{}", "running", 0, 0, "", false, at); err != nil {
		return err
	}
	if _, err := tx.Stmt(w.insertEvent).Exec(id, nil, "running", at, "{}"); err != nil {
		return err
	}
	if _, err := tx.Stmt(w.hourIn).Exec(at[:13], "running"); err != nil {
		return err
	}
	if _, err := tx.Stmt(w.countIn).Exec(session); err != nil {
		return err
	}
	return tx.Commit()
}

// settle is Settle's transaction: the compare-and-set returning the row,
// and the terminal event.
func (w *rawWriter) settle(id string, code *int) error {
	at := time.Now().UTC().Format(rawTimeLayout)
	var exit any
	if code != nil {
		exit = *code
	}
	tx, err := w.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	cols := make([]any, rawJobColumnCount)
	for i := range cols {
		cols[i] = new(any)
	}
	if err := tx.Stmt(w.settleJob).QueryRow("exited", exit, "", "", at, id, 0, 0).Scan(cols...); err != nil {
		return err
	}
	created, session := (*cols[rawCreatedAtColumn].(*any)).(string), (*cols[1].(*any)).(string)
	if _, err := tx.Stmt(w.hourOut).Exec(created[:13]); err != nil {
		return err
	}
	outcome := "failed"
	if code != nil && *code == 0 {
		outcome = "ok"
	}
	if _, err := tx.Stmt(w.hourIn).Exec(created[:13], outcome); err != nil {
		return err
	}
	if _, err := tx.Stmt(w.countSettled).Exec(session); err != nil {
		return err
	}
	if _, err := tx.Stmt(w.insertEvent).Exec(id, "running", "exited", at, "{}"); err != nil {
		return err
	}
	return tx.Commit()
}
