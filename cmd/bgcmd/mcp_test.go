package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
)

func TestMCPListsTheToolsWithTheirSchemasAndAnnotations(t *testing.T) {
	t.Parallel()
	s := newMCPEnv(t).start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.cs.ListTools(ctx, nil)
	require.NoError(t, err)
	tools := map[string]*mcp.Tool{}
	var names []string
	for _, tl := range res.Tools {
		tools[tl.Name] = tl
		names = append(names, tl.Name)
	}
	require.ElementsMatch(t, []string{"run_command_bg", "command_status", "command_output",
		"command_wait", "command_kill", "command_list", "command_export", "command_rerun"}, names, "no git tools without --repo")

	var run struct {
		Type                 string                    `json:"type"`
		Properties           map[string]map[string]any `json:"properties"`
		Required             []string                  `json:"required"`
		AdditionalProperties bool                      `json:"additionalProperties"`
	}
	b, err := json.Marshal(tools["run_command_bg"].InputSchema)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &run))
	require.Equal(t, "object", run.Type)
	require.Equal(t, []string{"argv"}, run.Required)
	require.False(t, run.AdditionalProperties)
	for _, p := range []string{"argv", "cwd", "env", "timeout_ms", "max_output_bytes", "labels", "wait_ms"} {
		require.Contains(t, run.Properties, p)
		require.NotEmpty(t, run.Properties[p]["description"], p)
	}
	require.Equal(t, "array", run.Properties["argv"]["type"])
	require.EqualValues(t, agenttools.MaxWait/time.Millisecond, run.Properties["wait_ms"]["maximum"])
	require.Contains(t, tools["run_command_bg"].Description, mcpFixture(t, "exit-with.sh"),
		"the description tells the model what the policy allows")

	for name, tl := range tools {
		a := tl.Annotations
		require.NotNil(t, a, name)
		require.NotNil(t, a.OpenWorldHint, name)
		require.False(t, *a.OpenWorldHint, "%s is closed-world", name)
		switch name {
		case "command_status", "command_output", "command_list", "command_wait":
			require.True(t, a.ReadOnlyHint, name)
		case "command_kill":
			require.False(t, a.ReadOnlyHint)
			require.True(t, *a.DestructiveHint)
		case "run_command_bg":
			require.False(t, a.ReadOnlyHint)
		}
	}
}

func TestMCPRunsACommandAndTheFinishedCounterGoesUpAndDown(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t)
	s := e.start(t)
	flag := filepath.Join(e.root, "go")
	t.Cleanup(func() { os.WriteFile(flag, nil, 0o600) }) // ends the command if the test fails early

	st := mcpOK[agenttools.Status](s, "run_command_bg", map[string]any{
		"argv": []string{mcpFixture(t, "wait-for-file.sh"), flag, "5"}})
	require.Equal(t, bgcmd.StateRunning, st.State)
	require.NotZero(t, st.PID)
	require.Equal(t, bgcmd.Counters{Running: 1}, st.Counters)

	l := mcpOK[agenttools.List](s, "command_list", nil)
	require.Equal(t, bgcmd.Counters{Running: 1, Finished: 0}, l.Counters)

	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	mcpWaitFor(t, "finished to reach 1", func() bool {
		return mcpOK[agenttools.List](s, "command_list", nil).Counters == bgcmd.Counters{Finished: 1}
	})

	got := mcpOK[agenttools.Status](s, "command_status", map[string]any{"task_id": st.TaskID})
	require.Equal(t, bgcmd.StateExited, got.State)
	require.Equal(t, 5, *got.ExitCode)
	require.Equal(t, "waiting\ndone\n", got.TailPreview)
	require.NotEmpty(t, got.Stdout.ArtifactID)
	require.Equal(t, bgcmd.Counters{}, got.Counters, "reading it cleared it from finished")
}

func TestMCPPagesOutputAndWaits(t *testing.T) {
	t.Parallel()
	s := newMCPEnv(t).start(t)
	st := mcpOK[agenttools.Status](s, "run_command_bg", map[string]any{
		"argv": []string{mcpFixture(t, "print-bytes.sh"), "50000"}, "wait_ms": 30000})
	require.Equal(t, bgcmd.StateExited, st.State, "settled within wait_ms")
	require.Equal(t, int64(50000), st.Stdout.Bytes)
	require.Len(t, []rune(st.TailPreview), bgcmd.MaxPreviewChars)
	require.Contains(t, st.Next, "command_output")

	var all strings.Builder
	var offset int64
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		p := mcpOK[agenttools.OutputPage](s, "command_output", map[string]any{
			"task_id": st.TaskID, "stream": "stdout", "offset": offset, "limit": 20000})
		all.WriteString(*p.Text)
		offset = p.NextOffset
		if !p.HasMore {
			require.Equal(t, int64(50000), p.TotalSize)
			break
		}
	}
	require.Equal(t, strings.Repeat("abcdefghijklmnopqrstuvwxyz\n", 50000/27+1)[:50000], all.String())

	p := mcpOK[agenttools.OutputPage](s, "command_output", map[string]any{
		"task_id": st.TaskID, "stream": "stdout", "unit": "lines", "tail": 2, "raw": true})
	require.NotNil(t, p.DataBase64)

	w := mcpOK[agenttools.Status](s, "command_wait", map[string]any{"task_id": st.TaskID, "timeout_ms": 1000})
	require.Equal(t, bgcmd.StateExited, w.State)
}

func TestMCPKillsACommand(t *testing.T) {
	t.Parallel()
	s := newMCPEnv(t).start(t)
	st := mcpOK[agenttools.Status](s, "run_command_bg", map[string]any{
		"argv": []string{mcpFixture(t, "ignore-term.sh")}})
	s.killAtEnd(st.TaskID)
	mcpWaitFor(t, "the script to be ready", func() bool {
		p := mcpOK[agenttools.OutputPage](s, "command_output", map[string]any{"task_id": st.TaskID, "stream": "stdout"})
		return *p.Text == "ready\n"
	})
	k := mcpOK[agenttools.Status](s, "command_kill", map[string]any{"task_id": st.TaskID})
	require.Equal(t, bgcmd.StateKilled, k.State, "SIGTERM is ignored, SIGKILL follows after the grace")
	require.Equal(t, "ready\n", k.TailPreview)
	require.Equal(t, bgcmd.Counters{}, k.Counters)
}

func TestMCPBadInputIsAToolErrorAndTheServerKeepsServing(t *testing.T) {
	t.Parallel()
	s := newMCPEnv(t).start(t)
	script := mcpFixture(t, "exit-with.sh")

	te, text := s.fail("run_command_bg", map[string]any{"argv": "go test ./... && go vet ./..."})
	require.True(t, te.Refused)
	require.Equal(t, "shell_syntax", te.Code)
	require.Contains(t, text, `To recover: split it into one element per argument, e.g. ["go","test","./..."]`)

	te, _ = s.fail("run_command_bg", map[string]any{"argv": []string{"/bin/sh", "-c", "id"}})
	require.Equal(t, "not_allowlisted", te.Code)

	for _, c := range []struct {
		tool string
		args any
		says string
	}{
		{"command_status", json.RawMessage(`"not an object"`), "must be a JSON object, not a string"},
		{"command_status", json.RawMessage(`[1, 2]`), "must be a JSON object, not an array"},
		{"command_status", map[string]any{}, `missing required argument "task_id"`},
		{"command_status", map[string]any{"task_id": 42}, `"task_id" must be a string, not a number`},
		{"command_status", map[string]any{"task_id": "x", "extra": 1}, `unknown argument "extra"`},
		{"command_status", map[string]any{"task_id": "01234567-no-such-task"}, "no command has task_id"},
		{"command_wait", map[string]any{"task_id": "x", "timeout_ms": 1e12}, "above its maximum of 600000"},
		{"command_output", map[string]any{"task_id": "x", "stream": "stdout", "limit": -1}, "below its minimum of 0"},
		{"command_list", map[string]any{"limit": 1 << 40}, "above its maximum of 200"},
		{"run_command_bg", map[string]any{"argv": []string{script}, "max_output_bytes": 1 << 40}, "above the policy's cap"},
		{"no_such_tool", map[string]any{}, `no tool named "no_such_tool"`},
	} {
		_, text := s.fail(c.tool, c.args)
		require.Contains(t, text, c.says, "%s %v", c.tool, c.args)
	}

	st := mcpOK[agenttools.Status](s, "run_command_bg", map[string]any{
		"argv": []string{script, "0"}, "wait_ms": 30000})
	require.Equal(t, bgcmd.StateExited, st.State, "the server still serves")
	require.NoError(t, s.cs.Ping(context.Background(), nil))
}
