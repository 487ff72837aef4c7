package agenttools_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
)

func TestBadInputIsAToolErrorNamingTheReason(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	script := fixture(t, "exit-with.sh")
	cases := []struct {
		name, tool, args string
		code             string
		says             string
	}{
		{"malformed JSON", "command_status", `{"task_id": `, agenttools.CodeInvalidArguments, "not valid JSON"},
		{"trailing garbage", "command_status", `{"task_id": "x"} {}`, agenttools.CodeInvalidArguments, "not valid JSON"},
		{"arguments not an object", "command_list", `["x"]`, agenttools.CodeInvalidArguments, "must be a JSON object, not an array"},
		{"missing required", "command_status", `{}`, agenttools.CodeInvalidArguments, `missing required argument "task_id"`},
		{"null required", "command_wait", `{"task_id": "x", "timeout_ms": null}`, agenttools.CodeInvalidArguments, `missing required argument "timeout_ms"`},
		{"wrong type", "command_status", `{"task_id": 7}`, agenttools.CodeInvalidArguments, `"task_id" must be a string, not a number`},
		{"wrong type integer", "command_wait", `{"task_id": "x", "timeout_ms": "10s"}`, agenttools.CodeInvalidArguments, `must be an integer, not a string`},
		{"unknown field", "command_status", `{"task_id": "x", "verbose": true}`, agenttools.CodeInvalidArguments, `unknown argument "verbose"`},
		{"unknown tool", "rm_rf", `{}`, agenttools.CodeUnknownTool, `no tool named "rm_rf"`},
		{"unknown task", "command_status", `{"task_id": "nope"}`, agenttools.CodeUnknownTask, `no command has task_id "nope"`},
		{"unknown task wait", "command_wait", `{"task_id": "nope", "timeout_ms": 10}`, agenttools.CodeUnknownTask, "nope"},
		{"unknown task output", "command_output", `{"task_id": "nope", "stream": "stdout"}`, agenttools.CodeUnknownTask, "nope"},
		{"unknown task kill", "command_kill", `{"task_id": "nope"}`, agenttools.CodeUnknownTask, "nope"},
		{"negative wait", "command_wait", `{"task_id": "x", "timeout_ms": -1}`, agenttools.CodeInvalidArguments, "below its minimum of 0"},
		{"huge wait", "run_command_bg", `{"argv": ["` + script + `"], "wait_ms": 1e30}`, agenttools.CodeInvalidArguments, "above its maximum of 600000"},
		{"huge timeout", "run_command_bg", `{"argv": ["` + script + `"], "timeout_ms": 99999999999999999999}`, agenttools.CodeInvalidArguments, "above its maximum"},
		{"negative cap", "run_command_bg", `{"argv": ["` + script + `"], "max_output_bytes": -5}`, agenttools.CodeInvalidArguments, "below its minimum"},
		{"huge list", "command_list", `{"limit": 100000}`, agenttools.CodeInvalidArguments, "above its maximum of 200"},
		{"unknown state", "command_list", `{"state": "done"}`, agenttools.CodeInvalidArguments, "not one of its values"},
		{"empty argv", "run_command_bg", `{"argv": []}`, agenttools.CodeInvalidArguments, "at least 1 item"},
		{"argv of numbers", "run_command_bg", `{"argv": ["` + script + `", 3]}`, agenttools.CodeInvalidArguments, "argv[1] must be a string"},
		{"env of numbers", "run_command_bg", `{"argv": ["` + script + `"], "env": {"N": 1}}`, agenttools.CodeInvalidArguments, `env["N"] must be a string`},
		{"policy over limit", "run_command_bg", `{"argv": ["` + script + `"], "timeout_ms": 3600000}`, "over_limit", "ceiling"},
		{"memory limit without a cgroup", "run_command_bg", `{"argv": ["` + script + `"], "max_memory_bytes": 536870912}`, "over_limit", "max memory 512MiB cannot be enforced: the policy has no cgroup"},
		{"negative process bound", "run_command_bg", `{"argv": ["` + script + `"], "max_processes": -1}`, agenttools.CodeInvalidArguments, "below its minimum"},
		{"not allowlisted", "run_command_bg", `{"argv": ["/bin/ls"]}`, "not_allowlisted", "/bin/ls"},
		{"cwd escape", "run_command_bg", `{"argv": ["` + script + `"], "cwd": "../.."}`, "cwd_escape", "outside"},
		{"single word string argv", "run_command_bg", `{"argv": "make"}`, agenttools.CodeInvalidArguments, "must be an array of strings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			te := h.in(t).fail(c.tool, json.RawMessage(c.args))
			require.Equal(t, c.code, te.Code, te.Text())
			require.Contains(t, te.Text(), c.says)
			require.NotEmpty(t, te.Hint)
		})
	}
	// Nothing above started a command.
	l := ok[*agenttools.List](h, "command_list", nil)
	require.Empty(t, l.Commands)
}

func TestToolRunRefusesAShellLineWithTheSplitHint(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.call("run_command_bg", json.RawMessage(`{"argv": "make test && make lint"}`))
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "refused (shell_syntax)")
	require.Contains(t, res.Text, `To recover: split it into one element per argument, e.g. ["make","test"]`)
	er := res.Value.(*agenttools.ErrorResult)
	require.True(t, er.Error.Refused)

	res = h.call("run_command_bg", map[string]any{"argv": []string{"go test ./..."}})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, `["go","test","./..."]`)

	refusals, err := h.store.Refusals(context.Background(), 10)
	require.NoError(t, err)
	require.Len(t, refusals, 2, "refusals are recorded for audit")
	require.Equal(t, "agent", refusals[0].Session)
}

func TestToolRunWithoutAPolicyIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ts, err := agenttools.New(agenttools.Options{Runner: noPolicyRunner(t, h)})
	require.NoError(t, err)
	require.Contains(t, ts.Tools()[0].Description, "No policy is configured")
	res, err := ts.Call(context.Background(), "run_command_bg", json.RawMessage(`{"argv": ["/bin/true"]}`))
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "refused (no_policy)")
}

func TestToolCallCancelledIsAnErrorNotAResult(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gate := filepath.Join(t.TempDir(), "never") // never created: the command runs until killed
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "wait-for-file.sh"), gate, "0"}})
	h.killAtEnd(st.TaskID)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := h.ts.Call(ctx, "command_wait", json.RawMessage(`{"task_id": "`+st.TaskID+`", "timeout_ms": 60000}`))
	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, res)
	k := ok[*agenttools.Status](h, "command_kill", map[string]any{"task_id": st.TaskID})
	require.Equal(t, bgcmd.StateKilled, k.State)
}
