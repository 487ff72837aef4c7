package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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

func TestModes(t *testing.T) {
	t.Parallel()
	for _, detached := range []bool{false, true} {
		name := map[bool]string{false: "in-process", true: "detached"}[detached]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			t.Run("a long command is polled to completion", func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, detached)
				j := e.start([]string{fixture(t, "slow-lines.sh"), "3", "0.05"}, runner.StartOptions{})
				require.Equal(t, bgcmd.StateRunning, j.State)
				require.NotZero(t, j.PID)
				var s *bgcmd.Status
				waitFor(t, "settle", func() bool {
					var err error
					s, err = e.r.Read(context.Background(), j.ID)
					require.NoError(t, err)
					return s.State.Settled()
				})
				require.Equal(t, bgcmd.StateExited, s.State)
				require.Equal(t, 0, *s.ExitCode)
				require.Equal(t, "line 1\nline 2\nline 3\ndone\n", e.output(j.ID, bgcmd.Stdout))
				require.Equal(t, int64(len("line 1\nline 2\nline 3\ndone\n")), s.Stdout.Bytes)
				require.NotEmpty(t, s.Stdout.SHA256)
				require.NotEmpty(t, s.Stdout.ArtifactID)
				require.Contains(t, s.TailPreview, "done")
				require.Equal(t, detached, s.Detached)
			})
			t.Run("exit codes and signals are recorded exactly", func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, detached)
				for _, code := range []int{0, 3} {
					j := e.start([]string{fixture(t, "exit-with.sh"), strconv.Itoa(code)}, runner.StartOptions{})
					s := e.await(j.ID)
					require.Equal(t, bgcmd.StateExited, s.State)
					require.Equal(t, code, *s.ExitCode)
					require.Empty(t, s.Signal)
					require.Equal(t, fmt.Sprintf("err: exiting with %d\n", code), e.output(j.ID, bgcmd.Stderr))
				}
				j := e.start([]string{fixture(t, "kill-self.sh"), "SEGV"}, runner.StartOptions{})
				s := e.await(j.ID)
				require.Equal(t, bgcmd.StateExited, s.State)
				require.Nil(t, s.ExitCode)
				require.Equal(t, "SIGSEGV", s.Signal)
			})
			t.Run("the cap lands mid-chunk with exactly its bytes kept", func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, detached)
				const cap = 100_003
				j := e.start([]string{fixture(t, "print-bytes.sh"), "5000000"}, runner.StartOptions{MaxOutputBytes: cap})
				s := e.await(j.ID)
				require.Equal(t, bgcmd.StateOutputLimit, s.State)
				require.Equal(t, int64(cap), s.Stdout.Bytes)
				require.True(t, s.Stdout.Capped)
				out := e.output(j.ID, bgcmd.Stdout)
				require.Len(t, out, cap)
				require.Equal(t, strings.Repeat("abcdefghijklmnopqrstuvwxyz\n", cap/27+1)[:cap], out)
				require.Contains(t, s.Error, "output cap")
			})
			t.Run("a SIGTERM-ignoring command times out and is SIGKILLed after the grace", func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, detached)
				e.policy.KillGrace = 300 * time.Millisecond
				e.r = e.newRunner(detached)
				var pid int
				s := awaitIgnoredTermTimeout(t, e, func(timeout time.Duration) string {
					j := e.start([]string{fixture(t, "ignore-term.sh")}, runner.StartOptions{Timeout: timeout})
					pid = j.PID
					return j.ID
				})
				require.Equal(t, bgcmd.StateTimeout, s.State)
				require.Equal(t, "SIGKILL", s.Signal)
				require.False(t, processAlive(pid))
			})
			t.Run("kill settles as killed and keeps the output", func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, detached)
				j := e.start([]string{fixture(t, "slow-lines.sh"), "100000", "0.02"}, runner.StartOptions{})
				waitFor(t, "first line", func() bool { return strings.HasPrefix(e.output(j.ID, bgcmd.Stdout), "line 1\n") })
				s, err := e.r.Kill(context.Background(), j.ID, syscall.SIGTERM)
				require.NoError(t, err)
				require.Equal(t, bgcmd.StateKilled, s.State)
				require.Equal(t, "SIGTERM", s.Signal)
				require.True(t, strings.HasPrefix(e.output(j.ID, bgcmd.Stdout), "line 1\n"))
				// Killing a settled job returns it unchanged.
				again, err := e.r.Kill(context.Background(), j.ID, syscall.SIGKILL)
				require.NoError(t, err)
				require.Equal(t, bgcmd.StateKilled, again.State)
				require.Equal(t, "SIGTERM", again.Signal)
			})
			t.Run("a grandchild left in the group is killed", func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, detached)
				j := e.start([]string{fixture(t, "fork-grandchild.sh")}, runner.StartOptions{})
				s := e.await(j.ID)
				require.Equal(t, bgcmd.StateExited, s.State)
				grandchild, err := strconv.Atoi(strings.TrimSpace(e.output(j.ID, bgcmd.Stdout)))
				require.NoError(t, err)
				waitFor(t, "grandchild gone", func() bool { return !processAlive(grandchild) })
				events, err := e.store.Events(context.Background(), j.ID)
				require.NoError(t, err)
				require.Equal(t, float64(1), events[len(events)-1].Detail["leftover_processes_killed"])
			})
			t.Run("a missing binary settles as start_failed", func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, detached)
				j := e.start([]string{"/nonexistent/bin/tool"}, runner.StartOptions{})
				require.Equal(t, bgcmd.StateStartFailed, j.State, "Start returns the settled job")
				s := e.await(j.ID)
				require.Equal(t, bgcmd.StateStartFailed, s.State)
				require.Contains(t, s.Error, "not installed")
			})
			t.Run("a replaced environment is exactly what the child sees", func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, detached)
				j := e.start([]string{"/usr/bin/env"}, runner.StartOptions{Env: map[string]string{"B": "2", "A": "1"}})
				e.await(j.ID)
				require.Equal(t, "A=1\nB=2\n", e.output(j.ID, bgcmd.Stdout))
				rec, err := e.store.Get(context.Background(), j.ID)
				require.NoError(t, err)
				require.True(t, rec.EnvReplaced)
				require.Equal(t, []string{"A", "B"}, rec.EnvNames)
				// An inherited environment reaches the child (TestMain set the marker)...
				j = e.start([]string{"/usr/bin/env"}, runner.StartOptions{})
				e.await(j.ID)
				require.Contains(t, e.output(j.ID, bgcmd.Stdout), inheritedMarker+"="+inheritedSecret)
				// ...but no value is ever stored.
				db, err := os.ReadFile(filepath.Join(e.home, "bgcmd.db"))
				require.NoError(t, err)
				require.NotContains(t, string(db), inheritedSecret)
			})
		})
	}
}

func TestCountersAndMarkSeen(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := context.Background()
	gate := filepath.Join(t.TempDir(), "gate")
	j := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "0"}, runner.StartOptions{Session: "agent"})
	s, err := e.r.Status(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.Counters{Running: 1, Finished: 0}, s.Counters)
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	waitFor(t, "settle", func() bool {
		c, err := e.r.Counters(ctx, "agent")
		require.NoError(t, err)
		return c.Running == 0
	})
	s, err = e.r.Status(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.Counters{Running: 0, Finished: 1}, s.Counters, "settled and not yet read")
	s, err = e.r.Read(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, s.State)
	require.Equal(t, bgcmd.Counters{Running: 0, Finished: 0}, s.Counters, "reading the settled status marked it seen")
	s, err = e.r.Read(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.Counters{Running: 0, Finished: 0}, s.Counters)
}

func TestAwaitIsBoundedByMaxWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	gate := filepath.Join(t.TempDir(), "gate")
	j := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "0"}, runner.StartOptions{})
	s, err := e.r.Await(context.Background(), j.ID, 50*time.Millisecond)
	require.NoError(t, err, "an elapsed wait is not an error")
	require.Equal(t, bgcmd.StateRunning, s.State, "the wait never kills the command")
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	require.Equal(t, bgcmd.StateExited, e.await(j.ID).State)
}

func TestRefusalCreatesNoJobAndIsRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := context.Background()
	_, err := e.r.Start(ctx, []string{"pnpm run lint && echo done"}, runner.StartOptions{Session: "a"})
	var ref *policy.Refusal
	require.ErrorAs(t, err, &ref)
	require.Equal(t, policy.CodeShellSyntax, ref.Code)
	res, err := e.store.List(ctx, jobstore.ListParams{})
	require.NoError(t, err)
	require.Empty(t, res.Jobs)
	refs, err := e.store.Refusals(ctx, 10)
	require.NoError(t, err)
	require.Len(t, refs, 1)
	require.Equal(t, string(policy.CodeShellSyntax), refs[0].Code)

	nopol, err := runner.New(ctx, runner.Options{Store: e.store, Home: e.home})
	require.NoError(t, err)
	_, err = nopol.Start(ctx, []string{"/usr/bin/env"}, runner.StartOptions{})
	require.ErrorAs(t, err, &ref)
	require.Equal(t, policy.CodeNoPolicy, ref.Code)
}

func TestUnknownIDsAreNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := context.Background()
	_, err := e.r.Read(ctx, "0190a0a0-0000-7000-8000-000000000000")
	require.ErrorIs(t, err, bgcmd.ErrNotFound)
	_, err = e.r.Kill(ctx, "nope", 0)
	require.ErrorIs(t, err, bgcmd.ErrNotFound)
	_, err = e.r.Await(ctx, "nope", time.Second)
	require.ErrorIs(t, err, bgcmd.ErrNotFound)
}

func TestUnwritableHomeFailsClearlyAndLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	// Root ignores directory permissions, so jobs/ becomes a file instead.
	e := newEnv(t, false)
	jobs := filepath.Join(e.home, "jobs")
	require.NoError(t, os.RemoveAll(jobs))
	require.NoError(t, os.WriteFile(jobs, nil, 0o600))
	_, err := e.r.Start(context.Background(), []string{"/usr/bin/env"}, runner.StartOptions{})
	require.ErrorContains(t, err, "create job directory")
	c, err := e.store.Counters(context.Background(), "default")
	require.NoError(t, err)
	require.Zero(t, c.Running)
}

func TestFiftyConcurrentStartsAllSettle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j, err := e.r.Start(context.Background(), []string{fixture(t, "exit-with.sh"), strconv.Itoa(i % 7)}, runner.StartOptions{})
			if err != nil {
				errs <- err
				return
			}
			s, err := e.r.Await(context.Background(), j.ID, time.Minute)
			if err == nil && (s.State != bgcmd.StateExited || *s.ExitCode != i%7) {
				err = fmt.Errorf("job %d: %s %v", i, s.State, s.ExitCode)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	require.NoError(t, errors.Join(all...))
}

func TestOnlyReadAndMarkReadMarkASettledJobRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := context.Background()
	j := e.start([]string{fixture(t, "wait-for-file.sh"), filepath.Join(t.TempDir(), "gate"), "0"}, runner.StartOptions{Session: "marks"})
	_, err := e.r.Kill(ctx, j.ID, 0)
	require.NoError(t, err)
	s, err := e.r.Await(ctx, j.ID, time.Minute)
	require.NoError(t, err)
	require.True(t, s.Settled())
	require.Equal(t, bgcmd.Counters{Running: 0, Finished: 1}, s.Counters, "Await only reads")
	s, err = e.r.Status(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.Counters{Running: 0, Finished: 1}, s.Counters, "Status only reads")
	page, err := e.r.List(ctx, jobstore.ListParams{Session: "marks", Unread: true})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1, "List only reads")
	rec, err := e.r.Job(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, j.ID, rec.ID)
	marked, err := e.r.MarkRead(ctx, j.ID)
	require.NoError(t, err)
	require.True(t, marked, "the first MarkRead clears it")
	marked, err = e.r.MarkRead(ctx, j.ID)
	require.NoError(t, err)
	require.False(t, marked, "exactly one caller clears it")
	s, err = e.r.Read(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.Counters{Running: 0, Finished: 0}, s.Counters)
}

func TestCloseIsBoundedByItsContext(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	gate := filepath.Join(t.TempDir(), "gate")
	j := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "0"}, runner.StartOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := e.r.Close(ctx)
	require.ErrorIs(t, err, context.Canceled, "an in-process job still runs: Close gives up when ctx is done")
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	require.NoError(t, e.r.Close(context.Background()), "the job settles, and Close returns")
	s, err := e.r.Status(context.Background(), j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, s.State)
}
