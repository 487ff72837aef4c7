package runner_test

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// fixture returns the absolute path of a testdata script.
func fixture(t testing.TB, name string) string { return testkit.Fixture(t, name) }

// env is one test's home, store, policy and runner.
type env struct {
	t      testing.TB
	home   string
	root   string
	store  *jobstore.Store
	policy *policy.Policy
	r      *runner.Runner
	// supervisor is the binary detached supervisors are started from:
	// this test binary when empty.
	supervisor string
}

// allowedFixtures are allowlisted in every test policy.
var allowedFixtures = []string{"exit-with.sh", "ignore-term.sh", "print-bytes.sh",
	"fork-grandchild.sh", "slow-lines.sh", "kill-self.sh", "wait-for-file.sh"}

func newEnv(t testing.TB, detached bool) *env {
	t.Helper()
	home := t.TempDir()
	root := t.TempDir()
	testkit.Cleanup(t, home) // after TempDir: runs before the removal
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: filepath.Join(home, "bgcmd.db")})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	pol := &policy.Policy{CwdRoot: root, DefaultTimeout: 10 * time.Minute, KillGrace: 2 * time.Second,
		AllowedExecutables: []string{"/usr/bin/env", "/nonexistent/bin/tool", "/bin/sh"}}
	for _, f := range allowedFixtures {
		pol.AllowedExecutables = append(pol.AllowedExecutables, fixture(t, f))
	}
	e := &env{t: t, home: home, root: root, store: st, policy: pol}
	e.r = e.newRunner(detached)
	return e
}

func (e *env) newRunner(detached bool) *runner.Runner {
	e.t.Helper()
	opts := runner.Options{Store: e.store, Home: e.home, Policy: e.policy, Detached: detached}
	if detached {
		opts.Binary = cmp.Or(e.supervisor, os.Args[0]) // TestMain calls runner.MaybeSupervise
	}
	r, err := runner.New(context.Background(), opts)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

func (e *env) start(argv []string, o runner.StartOptions) *bgcmd.Job {
	e.t.Helper()
	j, err := e.r.Start(context.Background(), argv, o)
	require.NoError(e.t, err)
	return j
}

// await waits (bounded generously) for the job to settle, then reads it
// (marking it read) as a host taking in the result does.
func (e *env) await(id string) *bgcmd.Status {
	e.t.Helper()
	s, err := e.r.Await(context.Background(), id, time.Minute)
	require.NoError(e.t, err)
	require.True(e.t, s.State.Settled(), "job %s did not settle: %+v", id, s)
	s, err = e.r.Read(context.Background(), id)
	require.NoError(e.t, err)
	return s
}

// output reads a whole stream back raw.
func (e *env) output(id string, st bgcmd.Stream) string {
	e.t.Helper()
	var b strings.Builder
	var off int64
	for {
		res, err := e.r.ReadOutput(context.Background(), id, st, artifacts.Page{Offset: off, Limit: artifacts.MaxPageBytes, Raw: true})
		require.NoError(e.t, err)
		b.Write(res.Data)
		if len(res.Data) == 0 || !res.HasMore && res.NextOffset >= res.TotalSize {
			return b.String()
		}
		off = res.NextOffset
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(pollDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func processAlive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z'
}

// awaitIgnoredTermTimeout runs ignore-term.sh under a timeout through
// start (which returns the job id) until a run in which the script said it
// had trapped SIGTERM before the timeout mattered: on a busy machine the
// timeout can fire before the shell has run its trap, and such a run says
// nothing about the escalation to SIGKILL, so the next run has twice the
// timeout. It returns the settled status of the run that counts.
func awaitIgnoredTermTimeout(t *testing.T, e *env, start func(timeout time.Duration) string) *bgcmd.Status {
	t.Helper()
	for timeout := 500 * time.Millisecond; timeout <= time.Minute; timeout *= 2 {
		id := start(timeout)
		s := e.await(id)
		if out := e.output(id, bgcmd.Stdout); out == "" {
			t.Logf("the timeout of %s fired before the script said it trapped SIGTERM (settled %s by %s): again with a longer one", timeout, s.State, s.Signal)
			continue
		}
		require.Equal(t, "ready\n", e.output(id, bgcmd.Stdout))
		return s
	}
	t.Fatal("ignore-term.sh never said it trapped SIGTERM before its timeout")
	return nil
}

// pollDeadline bounds how long a poll waits for what a test expects before
// the test fails. It bounds only a failure: a poll returns as soon as its
// condition holds, so it is generous for a loaded machine (two cores, the
// race detector, many tests at once).
const pollDeadline = 2 * time.Minute
