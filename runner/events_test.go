package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// nextEvent receives one event or fails after a generous deadline.
func nextEvent(t *testing.T, ch <-chan bgcmd.Event) bgcmd.Event {
	t.Helper()
	select {
	case e, ok := <-ch:
		require.True(t, ok, "the event channel closed early")
		return e
	case <-time.After(time.Minute):
		t.Fatal("no event within a minute")
		return bgcmd.Event{}
	}
}

func TestEventsDeliverASettleFromAnotherProcessAndResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	// A second store and runner on the same database: another process's view.
	st2, err := jobstore.Open(context.Background(), jobstore.Options{Path: filepath.Join(e.home, "bgcmd.db")})
	require.NoError(t, err)
	t.Cleanup(func() { st2.Close() })
	r2, err := runner.New(context.Background(), runner.Options{Store: st2, Home: e.home, SkipReconcile: true})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := r2.Events(ctx, runner.EventFilter{Settled: true, After: -1})
	require.NoError(t, err)

	gate := filepath.Join(e.root, "go")
	j := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "3"}, runner.StartOptions{Cwd: e.root})
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	ev := nextEvent(t, ch)
	require.Equal(t, j.ID, ev.JobID)
	require.Equal(t, bgcmd.StateRunning, ev.From)
	require.Equal(t, bgcmd.StateExited, ev.To)
	require.NotNil(t, ev.ExitCode)
	require.Equal(t, 3, *ev.ExitCode)
	require.Equal(t, "default", ev.Session)

	// Resuming after that seq gives the next job's events and nothing before.
	j2 := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Cwd: e.root})
	e.await(j2.ID)
	cancel()
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	ch2, err := r2.Events(ctx2, runner.EventFilter{After: ev.Seq})
	require.NoError(t, err)
	created, settled := nextEvent(t, ch2), nextEvent(t, ch2)
	require.Equal(t, j2.ID, created.JobID)
	require.Equal(t, bgcmd.State(""), created.From)
	require.Equal(t, j2.ID, settled.JobID)
	require.Equal(t, bgcmd.StateExited, settled.To)
	require.Greater(t, created.Seq, ev.Seq)
}

func TestEventSeqIsNeverReusedAfterTheNewestRowsArePruned(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	j := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Cwd: e.root})
	e.await(j.ID) // marks it read, so prune may take it
	ctx := context.Background()
	last, err := e.store.LatestEventSeq(ctx)
	require.NoError(t, err)
	_, err = e.store.Prune(ctx, jobstore.PruneParams{States: []bgcmd.State{bgcmd.StateExited}})
	require.NoError(t, err)
	j2 := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Cwd: e.root})
	e.await(j2.ID)
	evs, err := e.store.EventsAfter(ctx, jobstore.EventsParams{After: last})
	require.NoError(t, err)
	require.Len(t, evs, 2, "a consumer that saw seq %d must see both events of the next job", last)
	require.Equal(t, j2.ID, evs[0].JobID)
}

func TestAwaitAnyReturnsTheFirstToSettle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	long := e.start([]string{fixture(t, "wait-for-file.sh"), filepath.Join(e.root, "never")}, runner.StartOptions{Cwd: e.root})
	gate := filepath.Join(e.root, "short")
	short := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "4"}, runner.StartOptions{Cwd: e.root})
	done := make(chan *bgcmd.Status, 1)
	errc := make(chan error, 1)
	go func() {
		s, err := e.r.AwaitAny(context.Background(), []string{long.ID, short.ID}, time.Minute)
		errc <- err
		done <- s
	}()
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	require.NoError(t, <-errc)
	s := <-done
	require.Equal(t, short.ID, s.ID)
	require.Equal(t, bgcmd.StateExited, s.State)
	require.Equal(t, 4, *s.ExitCode)
	// A bounded wait on the long one alone elapses with it still running.
	s, err := e.r.AwaitAny(context.Background(), []string{long.ID}, 50*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, s.State)
	_, err = e.r.Kill(context.Background(), long.ID, syscall.SIGKILL)
	require.NoError(t, err)
}

// hookEnv is an env whose policy has the test hook: it appends a line per
// run to log and copies its stdin under dir.
func hookEnv(t *testing.T, detached bool, code string) (e *env, log, dir string) {
	e = newEnv(t, detached)
	dir = t.TempDir()
	log = filepath.Join(dir, "runs.log")
	e.policy.OnSettle = []string{fixture(t, "on-settle-hook.sh"), log, dir, code}
	e.policy.OnSettleTimeout = 30 * time.Second
	return e, log, dir
}

// hookRun waits until the job's hook has finished and returns its row.
func hookRun(t *testing.T, st *jobstore.Store, id string) *jobstore.HookRun {
	t.Helper()
	var h *jobstore.HookRun
	waitFor(t, "the on_settle hook to finish", func() bool {
		var err error
		h, err = st.SettleHookRun(context.Background(), id)
		require.NoError(t, err)
		return h.FinishedAt != nil
	})
	return h
}

func TestOnSettleHookRunsOnceWithTheStatus(t *testing.T) {
	t.Parallel()
	e, log, dir := hookEnv(t, true, "0")
	j := e.start([]string{fixture(t, "exit-with.sh"), "7"}, runner.StartOptions{Cwd: e.root})
	e.await(j.ID)
	h := hookRun(t, e.store, j.ID)
	require.Equal(t, jobstore.HookOK, h.Outcome)
	lines, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, j.ID+" exited 7 "+"/usr/local/bin:/usr/bin:/bin\n", string(lines))
	var s bgcmd.Status
	b, err := os.ReadFile(filepath.Join(dir, j.ID+".json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &s))
	require.Equal(t, j.ID, s.ID)
	require.Equal(t, bgcmd.StateExited, s.State)
	require.Contains(t, s.TailPreview, "exiting with 7")
	privs, err := os.ReadFile(filepath.Join(dir, j.ID+".privs"))
	require.NoError(t, err)
	require.Equal(t, "NoNewPrivs:\t1\n", string(privs), "the hook may gain privileges, as a job may not")
	// Reconcile, by any number of runners, never runs it again.
	for range 2 {
		_, err := e.newRunner(false).Reconcile(context.Background())
		require.NoError(t, err)
	}
	lines, err = os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(lines), "\n"))
}

func TestFailingOnSettleHookLeavesTheJobAlone(t *testing.T) {
	t.Parallel()
	e, _, _ := hookEnv(t, false, "9")
	j := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Cwd: e.root})
	e.await(j.ID)
	h := hookRun(t, e.store, j.ID)
	require.Equal(t, jobstore.HookFailed, h.Outcome)
	require.Equal(t, 9, *h.ExitCode)
	require.Contains(t, h.Error, "on-settle-hook.sh")
	s, err := e.r.Status(context.Background(), j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, s.State)
	require.Equal(t, 0, *s.ExitCode)
	evs, err := e.store.Events(context.Background(), j.ID)
	require.NoError(t, err)
	require.Len(t, evs, 2, "a hook adds no transition")
}

func TestOnSettleHookRunsWhenReconcileSettlesAKilledSupervisorsJob(t *testing.T) {
	t.Parallel()
	e, log, _ := hookEnv(t, true, "0")
	j := e.start([]string{fixture(t, "wait-for-file.sh"), filepath.Join(e.root, "never")}, runner.StartOptions{Cwd: e.root})
	rec, err := e.store.Get(context.Background(), j.ID)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(rec.SupervisorPID, syscall.SIGKILL))
	waitFor(t, "the supervisor to die", func() bool { return !processAlive(rec.SupervisorPID) })
	r1, r2 := e.newRunner(false), e.newRunner(false)
	errc := make(chan error, 2)
	for _, r := range []*runner.Runner{r1, r2} {
		go func() { _, err := r.Reconcile(context.Background()); errc <- err }()
	}
	require.NoError(t, <-errc)
	require.NoError(t, <-errc)
	h := hookRun(t, e.store, j.ID)
	require.Equal(t, jobstore.HookOK, h.Outcome)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, j.ID+" orphaned  /usr/local/bin:/usr/bin:/bin\n", string(b))
}

func TestOnSettleHookOfASettlerThatDiedBeforeRunningItRunsAtReconcile(t *testing.T) {
	t.Parallel()
	e, log, _ := hookEnv(t, false, "0")
	e.policy.Path = "/usr/bin:/bin" // the row below is the policy's hook
	ctx := context.Background()
	// A settler that committed the settle and died before claiming the
	// hook: its pid is gone.
	dead := exec.Command("/bin/true")
	require.NoError(t, dead.Run())
	j := &bgcmd.Job{Session: "s", Argv: []string{"/bin/true"}, Exe: "/bin/true", Cwd: e.root,
		SupervisorPID: dead.Process.Pid, SupervisorStart: 1, Timeout: time.Minute}
	require.NoError(t, e.store.Create(ctx, j))
	require.NoError(t, e.store.AddSettleHook(ctx, jobstore.SettleHook{JobID: j.ID,
		Argv: e.policy.OnSettle, SearchPath: "/usr/bin:/bin", Timeout: 30 * time.Second}))
	zero := 0
	_, err := e.store.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &zero})
	require.NoError(t, err)
	h, err := e.store.SettleHookRun(ctx, j.ID)
	require.NoError(t, err)
	require.Nil(t, h.ClaimedAt)

	r := e.newRunner(false) // New reconciles
	require.NoError(t, r.Close(context.Background()))
	h = hookRun(t, e.store, j.ID)
	require.Equal(t, jobstore.HookOK, h.Outcome)
	_, err = e.newRunner(false).Reconcile(ctx)
	require.NoError(t, err)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, j.ID+" exited 0 /usr/bin:/bin\n", string(b))
}

// A detached supervisor is told, with a job that has no row yet, whether
// its host's policy stores an on_settle hook with it: without one, the
// supervisor's settle looks for no hook (no read after every settle).
func TestTheHandOverSaysWhetherTheJobHasAHook(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		hook bool
		want string
	}{
		{"without on_settle", false, `(it printed: spec: "hookless":true)`},
		{"with on_settle", true, "(it printed: spec:)"}, // no field: the supervisor looks
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, false)
			if tt.hook {
				e.policy.OnSettle = []string{fixture(t, "on-settle-hook.sh"), filepath.Join(t.TempDir(), "runs.log"), t.TempDir(), "0"}
			}
			r, err := runner.New(context.Background(), runner.Options{Store: e.store, Home: e.home, Policy: e.policy,
				Detached: true, Binary: fixture(t, "echo-hookless.sh")})
			require.NoError(t, err)
			t.Cleanup(func() { r.Close(context.Background()) })
			j, err := r.Start(context.Background(), []string{fixture(t, "exit-with.sh"), "0"},
				runner.StartOptions{Env: map[string]string{"PATH": "/usr/bin:/bin"}})
			require.Error(t, err, "the stand-in supervisor starts nothing")
			require.NotNil(t, j)
			require.Equal(t, bgcmd.StateStartFailed, j.State)
			require.Contains(t, j.Error, tt.want)
		})
	}
}
