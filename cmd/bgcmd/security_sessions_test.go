package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/agenttools"
)

// TestMCPServerOfAnotherSessionCannotTouchAJob is the exploit through the
// real binary: `bgcmd mcp` for session mallory, on alice's home, asks for
// alice's job by id. It must get what an unknown id gets, and alice's job
// must keep running, unread.
func TestMCPServerOfAnotherSessionCannotTouchAJob(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	alice := env.start(t) // session agent-1
	mallory := env.start(t, "--session", "mallory")

	flag := filepath.Join(env.root, "go")
	run := mcpOK[agenttools.Status](alice, "run_command_bg", map[string]any{
		"argv": []string{mcpFixture(t, "wait-for-file.sh"), flag, "0"}})
	alice.killAtEnd(run.TaskID)
	// The second job ends only once its start has returned: a job that
	// ended before would come back settled, and read, from the start.
	flag2 := filepath.Join(env.root, "go2")
	done := mcpOK[agenttools.Status](alice, "run_command_bg", map[string]any{
		"argv": []string{mcpFixture(t, "wait-for-file.sh"), flag2, "0"}})
	require.False(t, done.Settled)
	require.NoError(t, os.WriteFile(flag2, nil, 0o600))
	mcpWaitFor(t, "alice's second job settles", func() bool {
		l := mcpOK[agenttools.List](alice, "command_list", map[string]any{"unread": true})
		return len(l.Commands) == 1
	})

	const unknown = "01900000-0000-7000-8000-000000000000"
	for _, id := range []string{run.TaskID, done.TaskID} {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"command_status", map[string]any{}},
			{"command_output", map[string]any{"stream": "stdout"}},
			{"command_wait", map[string]any{"timeout_ms": 0}},
			{"command_kill", map[string]any{"signal": "SIGKILL"}},
		} {
			c.args["task_id"] = unknown
			wantErr, wantText := mallory.fail(c.tool, c.args)
			c.args["task_id"] = id
			gotErr, gotText := mallory.fail(c.tool, c.args)
			require.Equal(t, agenttools.CodeUnknownTask, gotErr.Code, "%s on alice's job", c.tool)
			require.Equal(t, wantErr.Code, gotErr.Code)
			require.Equal(t, strings.ReplaceAll(wantText, unknown, id), gotText, "%s on alice's job", c.tool)
		}
	}
	require.Empty(t, mcpOK[agenttools.List](mallory, "command_list", map[string]any{}).Commands)

	l := mcpOK[agenttools.List](alice, "command_list", map[string]any{"unread": true})
	require.Len(t, l.Commands, 1, "mallory did not mark alice's job read")
	require.Equal(t, 1, l.Counters.Finished)
	st := mcpOK[agenttools.Status](alice, "command_status", map[string]any{"task_id": run.TaskID})
	require.Equal(t, "running", string(st.State), "mallory did not kill alice's job")
	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	st = mcpOK[agenttools.Status](alice, "command_wait", map[string]any{"task_id": run.TaskID, "timeout_ms": 60000})
	require.Equal(t, "exited", string(st.State))
}

// TestSessionMeansTheSameForEveryCommand: --session and BGCMD_SESSION name
// the session for list as for run; list shows the current session unless
// --all-sessions; the operator's CLI still reaches any job by id.
func TestSessionMeansTheSameForEveryCommand(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	a := strings.TrimSpace(h.ok("--session", "alice", "run", "--", fixture(t, "exit-with.sh"), "0"))
	b := strings.TrimSpace(h.ok("env:BGCMD_SESSION=bob", "run", "--", fixture(t, "exit-with.sh"), "0"))
	d := h.start(fixture(t, "exit-with.sh"), "0")
	ids := func(args ...string) []string {
		var env []string
		for len(args) > 0 && strings.HasPrefix(args[0], "env:") {
			env, args = append(env, args[0]), args[1:]
		}
		var out []string
		for _, j := range jsonLines(t, h.ok(append(append(env, "--json"), args...)...)) {
			out = append(out, j["id"].(string))
		}
		return out
	}
	require.Equal(t, []string{a}, ids("--session", "alice", "list"))
	require.Equal(t, []string{a}, ids("list", "--session", "alice"))
	require.Equal(t, []string{a}, ids("env:BGCMD_SESSION=alice", "list"))
	require.Equal(t, []string{b}, ids("env:BGCMD_SESSION=bob", "list"))
	require.Equal(t, []string{b}, ids("env:BGCMD_SESSION=alice", "--session", "bob", "list"), "the flag wins over the variable")
	require.Equal(t, []string{d}, ids("list"), "no session named: the default session")
	require.ElementsMatch(t, []string{a, b, d}, ids("list", "--all-sessions"))
	r := h.bgcmd("list", "--all-sessions", "--session", "alice")
	require.Equal(t, exitUsage, r.code, r.stderr)

	// The operator's CLI reaches every session's job by id.
	require.Equal(t, "alice", h.status(a)["session"])
	h.ok("env:BGCMD_SESSION=bob", "wait", a)
}
