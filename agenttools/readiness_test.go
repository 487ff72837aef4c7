package agenttools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
)

func TestToolWaitUntilOutputReturnsOnTheLineAndNeverMarksRead(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	flag := filepath.Join(h.root, "go")
	t.Cleanup(func() { os.WriteFile(flag, nil, 0o600) }) // ends the command if the test fails early
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "wait-for-file.sh"), flag, "0"}})

	w := ok[*agenttools.Status](h, "command_wait", map[string]any{"task_id": st.TaskID, "timeout_ms": 60000,
		"until_output": "^wait(ing)?$", "stream": "stdout"})
	require.Equal(t, "matched", w.WaitOutcome)
	require.Equal(t, &agenttools.LineMatch{Stream: bgcmd.Stdout, Line: 1, Text: "waiting"}, w.Match)
	require.Equal(t, bgcmd.StateRunning, w.State, "the command keeps running after the match")

	w = ok[*agenttools.Status](h, "command_wait", map[string]any{"task_id": st.TaskID, "timeout_ms": 50,
		"until_output": "waiting", "from_line": 1})
	require.Equal(t, "elapsed", w.WaitOutcome, "from_line skips the line already matched")
	require.Nil(t, w.Match)

	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	w = ok[*agenttools.Status](h, "command_wait", map[string]any{"task_id": st.TaskID, "timeout_ms": 60000,
		"until_output": "never printed"})
	require.Equal(t, "settled", w.WaitOutcome)
	require.Equal(t, bgcmd.StateExited, w.State)
	require.Contains(t, w.Next, "without printing a matching line")
	require.Equal(t, 1, w.Counters.Finished, "a readiness wait does not mark the command read")
}

func TestToolWaitUntilOutputRefusesABadPattern(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "exit-with.sh"), "0"}, "wait_ms": 60000})
	e := h.fail("command_wait", map[string]any{"task_id": st.TaskID, "timeout_ms": 10, "until_output": "(("})
	require.Equal(t, agenttools.CodeInvalidArguments, e.Code)
	require.Contains(t, e.Message, "not a valid regular expression")
	e = h.fail("command_wait", map[string]any{"task_id": st.TaskID, "timeout_ms": 10, "until_output": "x", "stream": "stdin"})
	require.Equal(t, agenttools.CodeInvalidArguments, e.Code)
}

// A filter costs the server at most artifacts.GrepBudget of scanning per
// call, whatever its pattern: a pattern that costs about 250 µs a line
// over the 370,000 lines of a 10 MB output (a minute and a half of CPU
// in one call, which went on after the caller gave up) ends its page on
// the budget, says scan_capped and where to go on; a readiness wait on it
// with no time to wait says elapsed after one budget instead of scanning
// the whole output first and saying settled.
func TestToolFiltersAreBoundedByTheScanBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "print-bytes.sh"), "10000000"}, "wait_ms": 120000})
	require.Equal(t, bgcmd.StateExited, st.State)
	costly := strings.Repeat(`\w?`, 330) + "Q"

	p := ok[*agenttools.OutputPage](h, "command_output", map[string]any{"task_id": st.TaskID, "stream": "stdout",
		"filter": costly})
	require.True(t, p.ScanCapped, "the filter page ended on its budget")
	require.True(t, p.HasMore)
	require.Greater(t, p.NextOffset, int64(0))
	require.Less(t, p.NextOffset, int64(10000000/27))
	require.Contains(t, p.Next, fmt.Sprintf("offset %d", p.NextOffset))

	w := ok[*agenttools.Status](h, "command_wait", map[string]any{"task_id": st.TaskID, "timeout_ms": 0,
		"until_output": costly})
	require.Equal(t, "elapsed", w.WaitOutcome, "the wait ended on its time, not after a scan of the whole output")
}
