package jobstore_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// The contention test runs this test binary again as separate worker
// processes; TestMain turns such a process into a worker.
const (
	workerEnv      = "BGCMD_JOBSTORE_WORKER_DB"
	workerDSNEnv   = "BGCMD_JOBSTORE_WORKER_DSN"
	workerJobsEnv  = "BGCMD_JOBSTORE_WORKER_JOBS"
	workerNameEnv  = "BGCMD_JOBSTORE_WORKER_NAME"
	workerFailCode = 3
)

func TestMain(m *testing.M) {
	if name := os.Getenv(stepEnv); name != "" {
		if err := runStep(name); err != nil {
			fmt.Fprintln(os.Stderr, "step:", err)
			os.Exit(workerFailCode)
		}
		os.Exit(0)
	}
	if path := os.Getenv(workerEnv); path != "" {
		n, _ := strconv.Atoi(os.Getenv(workerJobsEnv))
		if err := runWorker(path, os.Getenv(workerNameEnv), n); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(workerFailCode)
		}
		os.Exit(0)
	}
	code := m.Run()
	for _, seeded := range []string{millionPath, bigSessionPath} { // seededStore's directories
		if seeded != "" {
			os.RemoveAll(filepath.Dir(seeded))
		}
	}
	jobstore.RemoveChainBenchStore()
	dropMillionPostgres()
	os.Exit(code)
}

// runWorker opens the store (racing the others to migrate it) and performs
// 2*jobs transitions: each job is created (one event) and settled (one more).
func runWorker(path, session string, jobs int) error {
	ctx := context.Background()
	s, err := jobstore.Open(ctx, jobstore.Options{Path: path, DSN: os.Getenv(workerDSNEnv), Host: "test-host"})
	if err != nil {
		return err
	}
	defer s.Close()
	for i := range jobs {
		j := &bgcmd.Job{Session: session, Argv: []string{"/bin/true"}, Exe: "/bin/true", Cwd: "/"}
		if err := s.Create(ctx, j); err != nil {
			return fmt.Errorf("job %d create: %w", i, err)
		}
		code := i % 4
		if _, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code}); err != nil {
			return fmt.Errorf("job %d settle: %w", i, err)
		}
	}
	return nil
}

// startWorkers starts n worker processes on one fresh database (the file
// at path, or the PostgreSQL database dsn); all of them open it at once, so
// the first open (migration) is contended too.
func startWorkers(t testing.TB, path, dsn string, n, jobsEach int) []*exec.Cmd {
	t.Helper()
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), workerEnv+"="+path,
			workerJobsEnv+"="+strconv.Itoa(jobsEach), workerNameEnv+"="+fmt.Sprintf("w%d", i),
			workerDSNEnv+"="+dsn)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		cmds[i] = cmd
	}
	return cmds
}

// On PostgreSQL the processes are the hosts sharing one database: the
// writer's advisory lock must keep the chain whole and job_events.seq in
// commit order (a feed consumer resumes after the last seq it saw).
func TestEightProcessesWriteOneFileWithoutErrorsOrLostEvents(t *testing.T) {
	t.Parallel()
	eachBackend(t, testEightProcessesWriteOneFileWithoutErrorsOrLostEvents)
}

func testEightProcessesWriteOneFileWithoutErrorsOrLostEvents(t *testing.T) {
	const procs, jobsEach = 8, 250 // 500 transitions per process
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	dsn := backendOptions(t, jobstore.Options{Path: path}).DSN
	for i, cmd := range startWorkers(t, path, dsn, procs, jobsEach) {
		require.NoError(t, cmd.Wait(), "worker %d", i)
	}

	s := openTest(t, jobstore.Options{Path: path})
	ctx := context.Background()
	for i := range procs {
		c, err := s.Counters(ctx, fmt.Sprintf("w%d", i))
		require.NoError(t, err)
		require.Equal(t, bgcmd.Counters{Running: 0, Finished: jobsEach}, c)
	}
	var events, jobs int
	db := rawDB(t, s)
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_events`).Scan(&events))
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM jobs WHERE state = 'exited'`).Scan(&jobs))
	require.Equal(t, procs*jobsEach*2, events)
	require.Equal(t, procs*jobsEach, jobs)
	var outOfOrder int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_events a JOIN job_events b
		ON b.chain_seq = a.chain_seq + 1 WHERE b.seq < a.seq`).Scan(&outOfOrder))
	require.Zero(t, outOfOrder, "event seqs were handed out in commit order")
	if backendOf(t) == backendSQLite {
		var integrity string
		require.NoError(t, db.QueryRow(`PRAGMA integrity_check`).Scan(&integrity))
		require.Equal(t, "ok", integrity)
	}
	rep, err := s.VerifyChain(ctx, jobstore.VerifyChainParams{})
	require.NoError(t, err)
	require.Nil(t, rep.Problem, "the chain in commit order across processes")
	require.Equal(t, int64(procs*jobsEach*2), rep.Rows)
}

// TestProcessesFirstOpeningABrandNewStoreAllSucceed: processes that open a
// store that does not exist yet, all at once, race to create the file, to
// turn on WAL and to migrate; each of them must open it, none may see
// "database is locked".
func TestProcessesFirstOpeningABrandNewStoreAllSucceed(t *testing.T) {
	t.Parallel()
	const rounds, procs = 10, 8
	for r := range rounds {
		path := filepath.Join(t.TempDir(), "bgcmd.db")
		for i, cmd := range startWorkers(t, path, "", procs, 0) {
			require.NoError(t, cmd.Wait(), "round %d, worker %d", r, i)
		}
	}
}
