package agenttools_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/agenttools"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// fixture returns the absolute path of a testdata script.
func fixture(t testing.TB, name string) string { return testkit.Fixture(t, name) }

// harness is one test's store, in-process runner and toolset.
type harness struct {
	t     *testing.T
	home  string
	root  string
	store *jobstore.Store
	r     *runner.Runner
	ts    *agenttools.Toolset
}

// newHarness makes a store in a temporary home, a policy allowing the
// testdata scripts under a temporary sandbox root, an in-process runner and
// a toolset for session "agent". opts may adjust the toolset's options.
func newHarness(t *testing.T, opts ...func(*agenttools.Options)) *harness {
	t.Helper()
	h := &harness{t: t, home: t.TempDir()}
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	h.root = root
	h.store, err = jobstore.Open(context.Background(), jobstore.Options{Path: filepath.Join(h.home, "bgcmd.db")})
	require.NoError(t, err)
	t.Cleanup(func() { h.store.Close() })
	pol := &policy.Policy{CwdRoot: root, DefaultTimeout: 10 * time.Minute, KillGrace: time.Second,
		AllowedExecutables: []string{"/nonexistent/bin/tool"}}
	for _, f := range []string{"exit-with.sh", "ignore-term.sh", "print-bytes.sh", "slow-lines.sh", "wait-for-file.sh"} {
		pol.AllowedExecutables = append(pol.AllowedExecutables, fixture(t, f))
	}
	h.r, err = runner.New(context.Background(), runner.Options{Store: h.store, Home: h.home, Policy: pol})
	require.NoError(t, err)
	t.Cleanup(func() { h.r.Close(context.Background()) })
	o := agenttools.Options{Runner: h.r, Session: "agent"}
	for _, f := range opts {
		f(&o)
	}
	h.ts, err = agenttools.New(o)
	require.NoError(t, err)
	return h
}

// in returns the harness reporting to t (a subtest).
func (h *harness) in(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}

// killAtEnd kills the task when the test ends, so that a test that fails
// early does not leave runner.Close waiting for it.
func (h *harness) killAtEnd(id string) {
	h.t.Cleanup(func() { h.r.Kill(context.Background(), id, syscall.SIGKILL) })
}

// call calls a tool; args is marshaled unless it is a json.RawMessage.
func (h *harness) call(name string, args any) *agenttools.Result {
	h.t.Helper()
	raw, ok := args.(json.RawMessage)
	if !ok {
		var err error
		raw, err = json.Marshal(args)
		require.NoError(h.t, err)
	}
	res, err := h.ts.Call(context.Background(), name, raw)
	require.NoError(h.t, err)
	require.NotNil(h.t, res)
	require.True(h.t, json.Valid(res.Structured), "structured result is not JSON: %s", res.Structured)
	var top map[string]json.RawMessage
	require.NoError(h.t, json.Unmarshal(res.Structured, &top))
	require.Contains(h.t, top, "counters", "every result carries the counters: %s", res.Structured)
	return res
}

// ok calls a tool that must succeed and returns its structured value.
func ok[T any](h *harness, name string, args any) T {
	h.t.Helper()
	res := h.call(name, args)
	require.False(h.t, res.IsError, "%s failed: %s", name, res.Text)
	v, isT := res.Value.(T)
	require.True(h.t, isT, "%s returned %T", name, res.Value)
	return v
}

// fail calls a tool that must fail and returns the tool error.
func (h *harness) fail(name string, args any) *agenttools.ToolError {
	h.t.Helper()
	res := h.call(name, args)
	require.True(h.t, res.IsError, "%s should have failed: %s", name, res.Text)
	er, isER := res.Value.(*agenttools.ErrorResult)
	require.True(h.t, isER, "error value is %T", res.Value)
	require.Contains(h.t, res.Text, "To recover: ", "an error says how to recover")
	return er.Error
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

// noPolicyRunner is a runner over h's store with no policy.
func noPolicyRunner(t *testing.T, h *harness) *runner.Runner {
	t.Helper()
	r, err := runner.New(context.Background(), runner.Options{Store: h.store, Home: h.home, SkipReconcile: true})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

// pollDeadline bounds how long a poll waits for what a test expects before
// the test fails. It bounds only a failure: a poll returns as soon as its
// condition holds, so it is generous for a loaded machine (two cores, the
// race detector, many tests at once).
const pollDeadline = 2 * time.Minute
