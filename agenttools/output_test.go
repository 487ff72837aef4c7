package agenttools_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
)

func TestToolOutputPagesJoinUpToTheWholeStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const n = 100_000
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "print-bytes.sh"), "100000"}, "wait_ms": 30000})
	require.Equal(t, bgcmd.StateExited, st.State)
	want := strings.Repeat("abcdefghijklmnopqrstuvwxyz\n", n/27+1)[:n]

	var got strings.Builder
	var offset int64
	pages := 0
	for {
		p := ok[*agenttools.OutputPage](h, "command_output", map[string]any{
			"task_id": st.TaskID, "stream": "stdout", "offset": offset, "limit": 40_000})
		require.Equal(t, int64(n), p.TotalSize)
		got.WriteString(*p.Text)
		pages++
		offset = p.NextOffset
		if !p.HasMore {
			require.Empty(t, p.Next)
			break
		}
		require.Contains(t, p.Next, "offset")
	}
	require.Equal(t, 3, pages)
	require.Equal(t, want, got.String())

	p := ok[*agenttools.OutputPage](h, "command_output", map[string]any{
		"task_id": st.TaskID, "stream": "stdout", "raw": true, "offset": 26, "limit": 3})
	require.Nil(t, p.Text)
	data, err := base64.StdEncoding.DecodeString(*p.DataBase64)
	require.NoError(t, err)
	require.Equal(t, "\nab", string(data))

	p = ok[*agenttools.OutputPage](h, "command_output", map[string]any{
		"task_id": st.TaskID, "stream": "stdout", "unit": "lines", "offset": 10, "limit": 2})
	require.Equal(t, "abcdefghijklmnopqrstuvwxyz\nabcdefghijklmnopqrstuvwxyz\n", *p.Text)
	require.Equal(t, int64(12), p.NextOffset)

	p = ok[*agenttools.OutputPage](h, "command_output", map[string]any{
		"task_id": st.TaskID, "stream": "stdout", "tail": 1})
	require.Equal(t, want[strings.LastIndexByte(want, '\n')+1:], *p.Text)

	p = ok[*agenttools.OutputPage](h, "command_output", map[string]any{
		"task_id": st.TaskID, "stream": "stdout", "filter": "^abc", "limit": 5})
	require.Nil(t, p.Text)
	require.Len(t, p.Matches, 5)
	require.Equal(t, int64(1), p.Matches[0].Line)

	p = ok[*agenttools.OutputPage](h, "command_output", map[string]any{
		"task_id": st.TaskID, "stream": "stderr"})
	require.Equal(t, "", *p.Text)
	require.False(t, p.HasMore)
}

func TestToolOutputOfARunningCommandAndTheFinishedCounter(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gate := filepath.Join(t.TempDir(), "gate")
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o600) }) // ends the command if the test fails early
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "wait-for-file.sh"), gate, "0"}})
	p := ok[*agenttools.OutputPage](h, "command_output", map[string]any{"task_id": st.TaskID, "stream": "stdout"})
	require.Equal(t, bgcmd.StateRunning, p.State, "the command waits for the gate")
	require.True(t, p.HasMore, "a running command may print more")
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	waitFor(t, "the command to finish", func() bool {
		return ok[*agenttools.List](h, "command_list", nil).Counters.Finished == 1
	})
	p = ok[*agenttools.OutputPage](h, "command_output", map[string]any{"task_id": st.TaskID, "stream": "stdout"})
	require.Equal(t, "waiting\ndone\n", *p.Text)
	require.Equal(t, bgcmd.StateExited, p.State)
	require.Equal(t, bgcmd.Counters{}, p.Counters, "reading the output reads the command")
}

func TestOutputLimitsAreToolErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "exit-with.sh"), "0"}, "wait_ms": 30000})
	for name, args := range map[string]map[string]any{
		"negative offset":  {"offset": -1},
		"huge byte limit":  {"limit": agenttools.MaxOutputBytes + 1},
		"huge line limit":  {"unit": "lines", "limit": agenttools.MaxOutputLines + 1},
		"huge tail":        {"tail": 1 << 40},
		"unknown unit":     {"unit": "words"},
		"unknown stream":   {"stream": "stdin"},
		"bad regexp":       {"filter": "("},
		"raw with filter":  {"filter": "x", "raw": true},
		"chars with tail":  {"unit": "chars", "tail": 3},
		"fractional limit": {"limit": 1.5},
	} {
		t.Run(name, func(t *testing.T) {
			args["task_id"] = st.TaskID
			if _, ok := args["stream"]; !ok {
				args["stream"] = "stdout"
			}
			te := h.in(t).fail("command_output", args)
			require.Equal(t, agenttools.CodeInvalidArguments, te.Code, te.Text())
		})
	}
}

func TestToolOutputPageIsTheCLIPageWithTaskStateAndCounters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "print-bytes.sh"), "100"}, "wait_ms": 30000})
	require.Equal(t, bgcmd.StateExited, st.State)
	res := h.call("command_output", map[string]any{"task_id": st.TaskID, "stream": "stdout"})
	require.False(t, res.IsError, res.Text)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(res.Structured, &top))
	page := res.Value.(*agenttools.OutputPage)
	want, err := json.Marshal(page.OutputPage)
	require.NoError(t, err)
	var cli map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(want, &cli))
	for k, v := range cli {
		require.JSONEq(t, string(v), string(top[k]), "field %s differs from the CLI's page", k)
	}
	extra := []string{}
	for k := range top {
		if _, inCLI := cli[k]; !inCLI {
			extra = append(extra, k)
		}
	}
	require.ElementsMatch(t, []string{"task_id", "state", "counters"}, extra, "only the task, its state and the counters are added")
}
