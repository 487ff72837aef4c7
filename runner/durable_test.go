package runner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// A host process for crash tests: this test binary started with
// hostHomeEnv set opens the home, starts hostArgvEnv (JSON) detached,
// prints the job id and then blocks (or exits when hostExitEnv is set).
const (
	hostHomeEnv    = "BGCMD_TEST_HOST_HOME"
	hostRootEnv    = "BGCMD_TEST_HOST_ROOT"
	hostArgvEnv    = "BGCMD_TEST_HOST_ARGV"
	hostTimeoutEnv = "BGCMD_TEST_HOST_TIMEOUT"
	hostExitEnv    = "BGCMD_TEST_HOST_EXIT"
)

func maybeHost() {
	home := os.Getenv(hostHomeEnv)
	if home == "" {
		return
	}
	ctx := context.Background()
	var argv []string
	if err := json.Unmarshal([]byte(os.Getenv(hostArgvEnv)), &argv); err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(2)
	}
	st, err := jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(home, "bgcmd.db")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(2)
	}
	timeout, _ := time.ParseDuration(os.Getenv(hostTimeoutEnv))
	pol := &policy.Policy{CwdRoot: os.Getenv(hostRootEnv), AllowedExecutables: []string{argv[0]},
		KillGrace: 200 * time.Millisecond}
	r, err := runner.New(ctx, runner.Options{Store: st, Home: home, Policy: pol, Detached: true, Binary: os.Args[0]})
	if err == nil {
		var j *bgcmd.Job
		if j, err = r.Start(ctx, argv, runner.StartOptions{Timeout: timeout}); err == nil {
			fmt.Println(j.ID)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(2)
	}
	if os.Getenv(hostExitEnv) != "" {
		os.Exit(0)
	}
	select {}
}

// startHost runs a host process that starts argv detached; it returns the
// host and the job id.
func startHost(t *testing.T, e *env, argv []string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	b, _ := json.Marshal(argv)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), hostHomeEnv+"="+e.home, hostRootEnv+"="+e.root, hostArgvEnv+"="+string(b))
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	return cmd, strings.TrimSpace(line)
}

func TestHostKilledMidRunTheCommandFinishesAndIsRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	gate := filepath.Join(t.TempDir(), "gate")
	host, id := startHost(t, e, []string{fixture(t, "wait-for-file.sh"), gate, "7"})
	require.NoError(t, host.Process.Signal(syscall.SIGKILL))
	host.Wait()

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	// No reconcile: the detached supervisor outlived its host and settles.
	s := e.await(id)
	require.Equal(t, bgcmd.StateExited, s.State)
	require.Equal(t, 7, *s.ExitCode)
	require.Equal(t, "waiting\ndone\n", e.output(id, bgcmd.Stdout))
	events, err := e.store.Events(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, events, 2)
}

func TestSupervisorKilledMidRunIsReconciledAsOrphaned(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	gate := filepath.Join(t.TempDir(), "gate")
	j := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "0"}, runner.StartOptions{})
	waitFor(t, "output", func() bool { return e.output(j.ID, bgcmd.Stdout) == "waiting\n" })
	rec, err := e.store.Get(context.Background(), j.ID)
	require.NoError(t, err)
	require.NotEqual(t, os.Getpid(), rec.SupervisorPID, "the detached supervisor claimed the job")
	require.NoError(t, syscall.Kill(rec.SupervisorPID, syscall.SIGKILL))
	waitFor(t, "supervisor gone", func() bool { return !processAlive(rec.SupervisorPID) })
	require.True(t, processAlive(rec.PID), "the child outlives its supervisor until reconcile")

	e.newRunner(true) // opening a runner reconciles
	s, err := e.r.Read(context.Background(), j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateOrphaned, s.State)
	require.Regexp(t, `killed [1-9]\d* leftover process`, s.Error)
	require.Contains(t, s.Error, "kept 8 bytes of stdout")
	waitFor(t, "child killed", func() bool { return !processAlive(rec.PID) })
	require.Equal(t, "waiting\n", e.output(j.ID, bgcmd.Stdout), "partial output readable")
}

// deadPID returns the pid of a process that has exited.
func deadPID(t testing.TB) int {
	cmd := exec.Command("/bin/true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

// orphanRow creates a running job row whose supervisor is gone, with logs.
func orphanRow(t testing.TB, e *env, supervisor int, start int64) *bgcmd.Job {
	t.Helper()
	j := &bgcmd.Job{Argv: []string{"/usr/bin/env"}, Exe: "/usr/bin/env", Cwd: e.root,
		SupervisorPID: supervisor, SupervisorStart: start, Timeout: time.Minute}
	require.NoError(t, e.store.Create(context.Background(), j))
	dir := filepath.Join(e.home, "jobs", j.ID)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stdout.log"), []byte("partial\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stderr.log"), nil, 0o600))
	return j
}

func TestExitRecordWithoutRowSettlesWithTheTrueCode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	j := orphanRow(t, e, deadPID(t), 0)
	record := `{"state":"exited","exit_code":7,"finished_at":"2026-01-01T00:00:00Z","detail":{"x":1}}`
	require.NoError(t, os.WriteFile(filepath.Join(e.home, "jobs", j.ID, "exit.json"), []byte(record), 0o600))

	rep, err := e.r.Reconcile(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, rep.FromExitRecord)
	s, err := e.r.Read(context.Background(), j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, s.State)
	require.Equal(t, 7, *s.ExitCode)
	require.Equal(t, "partial\n", e.output(j.ID, bgcmd.Stdout))
	// The directory is removed in the background, as Close waits for.
	waitFor(t, "the job directory removed once settled", func() bool {
		_, err := os.Stat(filepath.Join(e.home, "jobs", j.ID))
		return os.IsNotExist(err)
	})
}

func TestARecycledPIDIsNotMistakenForTheSupervisor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	// This very process is alive, but it did not start at time 1.
	impostor := orphanRow(t, e, os.Getpid(), 1)
	rep, err := e.r.Reconcile(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, rep.Orphaned)
	rec, err := e.store.Get(context.Background(), impostor.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateOrphaned, rec.State)

	// With the true start time, the same pid is a live supervisor.
	stat, err := os.ReadFile("/proc/self/stat")
	require.NoError(t, err)
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	var start int64
	fmt.Sscan(fields[19], &start)
	live := orphanRow(t, e, os.Getpid(), start)
	rep, err = e.r.Reconcile(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, rep.Alive)
	rec, err = e.store.Get(context.Background(), live.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, rec.State)
}

func TestTwoReconcilersSettleEachJobOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	dead := deadPID(t)
	var ids []string
	for range 20 {
		ids = append(ids, orphanRow(t, e, dead, 0).ID)
	}
	var wg sync.WaitGroup
	reports := make([]*runner.ReconcileReport, 2)
	errs := make([]error, 2)
	for i := range 2 {
		st, err := jobstore.Open(context.Background(), jobstore.Options{Path: filepath.Join(e.home, "bgcmd.db")})
		require.NoError(t, err)
		defer st.Close()
		r, err := runner.New(context.Background(), runner.Options{Store: st, Home: e.home, SkipReconcile: true})
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			reports[i], errs[i] = r.Reconcile(context.Background())
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0], "the first reconciler")
	require.NoError(t, errs[1], "the second reconciler")
	require.Equal(t, 20, reports[0].Orphaned+reports[1].Orphaned)
	for _, id := range ids {
		events, err := e.store.Events(context.Background(), id)
		require.NoError(t, err)
		require.Len(t, events, 2, "one creation and exactly one terminal event")
		arts, err := e.store.Artifacts(context.Background(), id)
		require.NoError(t, err)
		require.Len(t, arts, 2)
	}
}

func TestKillAndTimeoutFromAnotherProcess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	host, id := startHost(t, e, []string{fixture(t, "ignore-term.sh")}, hostExitEnv+"=1")
	require.NoError(t, host.Wait())
	waitFor(t, "ready", func() bool { return e.output(id, bgcmd.Stdout) == "ready\n" })
	s, err := e.r.Kill(context.Background(), id, syscall.SIGTERM)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateKilled, s.State)
	require.Equal(t, "SIGKILL", s.Signal, "SIGTERM is ignored, so the supervisor escalated")

	s = awaitIgnoredTermTimeout(t, e, func(timeout time.Duration) string {
		host, id := startHost(t, e, []string{fixture(t, "ignore-term.sh")}, hostExitEnv+"=1", hostTimeoutEnv+"="+timeout.String())
		require.NoError(t, host.Wait())
		return id
	})
	require.Equal(t, bgcmd.StateTimeout, s.State)
	require.Equal(t, "SIGKILL", s.Signal)
}

func TestMissingSupervisorBinaryFailsTheStartClearly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	r, err := runner.New(context.Background(), runner.Options{Store: e.store, Home: e.home, Policy: e.policy,
		Detached: true, Binary: filepath.Join(t.TempDir(), "no-bgcmd")})
	require.NoError(t, err)
	j, err := r.Start(context.Background(), []string{"/usr/bin/env"}, runner.StartOptions{})
	require.ErrorContains(t, err, "no-bgcmd")
	require.NotNil(t, j)
	require.Equal(t, bgcmd.StateStartFailed, j.State, "no job left running")
}

func TestHomeDeletedUnderARunningJobSettlesWithAClearError(t *testing.T) {
	t.Parallel()
	for _, detached := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-process", true: "detached"}[detached], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, detached)
			gate := filepath.Join(t.TempDir(), "gate")
			j := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "0"}, runner.StartOptions{})
			waitFor(t, "output", func() bool { return e.output(j.ID, bgcmd.Stdout) == "waiting\n" })

			// The job directory (its logs, its exit record's home) and the
			// artifact store are removed while the command runs.
			require.NoError(t, os.RemoveAll(filepath.Join(e.home, "jobs")))
			require.NoError(t, os.RemoveAll(filepath.Join(e.home, "artifacts")))
			require.NoError(t, os.WriteFile(gate, nil, 0o600))

			s := e.await(j.ID)
			require.True(t, s.State.Settled())
			require.NotEmpty(t, s.Error, "the loss is said, not hidden")
			require.Regexp(t, `bank stdout: [^;]*stdout\.log[^;]*no such file or directory`, s.Error,
				"the error names the log that could not be banked and why (settled %s)", s.State)
		})
	}
}

// startThrough starts /usr/bin/env through a detached runner whose
// supervisor binary is the shell script, written to a file called name;
// it returns that file's path and what Start returned.
func (e *env) startThrough(name, script string) (string, *bgcmd.Job, error) {
	e.t.Helper()
	bin := filepath.Join(e.t.TempDir(), name)
	require.NoError(e.t, os.WriteFile(bin, []byte(script), 0o700))
	r, err := runner.New(context.Background(), runner.Options{Store: e.store, Home: e.home, Policy: e.policy,
		Detached: true, Binary: bin})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { r.Close(context.Background()) })
	j, err := r.Start(context.Background(), []string{"/usr/bin/env"}, runner.StartOptions{})
	return bin, j, err
}

func TestASupervisorThatReportsAnErrorLeavesNoJobRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	// A stand-in supervisor that reads its spec, as a real one does, then
	// fails before it can touch the store.
	_, j, err := e.startThrough("fake-supervisor", "#!/bin/sh\nread -r store <&3; read -r job <&3\necho 'error: cannot open the store' >&4\n")
	require.ErrorContains(t, err, "cannot open the store")
	require.NotNil(t, j)
	require.Equal(t, bgcmd.StateStartFailed, j.State)
	require.Contains(t, j.Error, "cannot open the store")
}

// TestAStartErrorRelaysABoundedExcerptOfWhatTheSupervisorPrinted: a
// binary that floods its output (here 256 KiB, with terminal escapes)
// before it fails the start gets its first and last words into the error
// and the job's row, one line of at most a few KiB with no escape left,
// not the whole flood.
func TestAStartErrorRelaysABoundedExcerptOfWhatTheSupervisorPrinted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	_, j, err := e.startThrough("myhost", "#!/bin/sh\nprintf 'usage: myhost\\033[2J\\n' >&2\nhead -c 262144 /dev/zero | tr '\\0' x >&2\necho 'last words' >&2\nexit 2\n")
	require.Error(t, err)
	require.NotNil(t, j)
	for _, text := range []string{err.Error(), j.Error} {
		require.Contains(t, text, "usage: myhost")
		require.Contains(t, text, "last words")
		require.Contains(t, text, " … ", "the middle of the flood is left out")
		require.Less(t, len(text), 4096)
		require.NotContains(t, text, "\x1b")
		require.NotContains(t, text, "\n")
	}
}

func TestABinaryWithoutMaybeSuperviseIsNamedWithTheFix(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	// A host's own binary, re-executed as a supervisor, runs its own main:
	// it prints its usage and exits without the supervisor's hello.
	host, j, err := e.startThrough("myhost", "#!/bin/sh\necho 'usage: myhost [--port N]' >&2\nexit 2\n")
	require.ErrorContains(t, err, "the binary "+host+" does not call runner.MaybeSupervise() at the top of main")
	require.ErrorContains(t, err, "set Options.Binary to the bgcmd binary")
	require.ErrorContains(t, err, "usage: myhost [--port N]")
	require.NotNil(t, j)
	require.Equal(t, bgcmd.StateStartFailed, j.State)
	require.Contains(t, j.Error, "does not call runner.MaybeSupervise()")
}
