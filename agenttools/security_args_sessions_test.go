package agenttools_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/agenttools"
)

// TestDuplicateNullArgumentCannotSmuggleAValuePastTheChecks: a
// duplicate key whose last value is null. The argument check reads the
// object as a map (the last value wins: null, "absent"), while decoding
// into the handler's struct leaves a field alone on null, so the first
// value survives. Every such call must be refused.
func TestDuplicateNullArgumentCannotSmuggleAValuePastTheChecks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	script := fixture(t, "exit-with.sh")
	own := ok[*agenttools.Status](h, "run_command_bg", map[string]any{"argv": []string{script, "0"}, "wait_ms": 60000})
	long := strings.Repeat("x", 2000)
	cases := []struct{ name, tool, args string }{
		{"list limit above 200", "command_list", `{"limit": 500, "limit": null}`},
		{"list limit above 200, key escaped", "command_list", `{"limit": 500, "lim\u0069t": null}`},
		{"priority above 1000", "run_command_bg", `{"argv": ["` + script + `", "0"], "priority": 999999, "priority": null}`},
		{"wait above 10 minutes", "run_command_bg", `{"argv": ["` + script + `", "0"], "wait_ms": 86400000, "wait_ms": null}`},
		{"output limit above 256 KiB", "command_output", `{"task_id": "` + own.TaskID + `", "stream": "stdout", "limit": 1048576, "limit": null}`},
		{"output offset negative", "command_output", `{"task_id": "` + own.TaskID + `", "stream": "stdout", "offset": -1, "offset": null}`},
		{"filter above 1000 bytes", "command_output", `{"task_id": "` + own.TaskID + `", "stream": "stdout", "filter": "` + long + `", "filter": null}`},
		{"until_output above 1024 bytes", "command_wait", `{"task_id": "` + own.TaskID + `", "timeout_ms": 0, "until_output": "` + long + `", "until_output": null}`},
		{"unit not one of its values", "command_output", `{"task_id": "` + own.TaskID + `", "stream": "stdout", "unit": "pages", "unit": null}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hh := h.in(t)
			te := hh.fail(c.tool, json.RawMessage(c.args))
			require.Equal(t, agenttools.CodeInvalidArguments, te.Code, te.Text())
		})
	}
	// An argument given once as null is still simply absent.
	l := ok[*agenttools.List](h, "command_list", json.RawMessage(`{"limit": null, "unread": null}`))
	require.Len(t, l.Commands, 1, "no call above started a command")
	for _, j := range l.Commands {
		rec, err := h.store.Get(t.Context(), j.TaskID)
		require.NoError(t, err)
		require.LessOrEqual(t, rec.Priority, 1000, "a priority beyond the schema's bound was stored")
	}
}

// TestAnotherSessionsTaskIsUnknownToExportWaitForOutputAndIDVariants
// covers what the session tests leave out: command_export (which checks
// the session on its own path, not through own), command_wait with
// until_output, command_output's raw, filter and chars pages, and ids
// that are near misses of another session's id (case, braces, urn form,
// prefix, suffix, padding, a path). Each answers as an id that names no
// command, no bundle is written, and the other session's command stays
// unread.
func TestAnotherSessionsTaskIsUnknownToExportWaitForOutputAndIDVariants(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *agenttools.Options) { o.Session = "alice" })
	mallory, err := agenttools.New(agenttools.Options{Runner: h.r, Session: "mallory"})
	require.NoError(t, err)
	m := newHarnessView(h, mallory)

	gate := filepath.Join(h.root, "done")
	theirs := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "wait-for-file.sh"), gate, "0"}})
	require.False(t, theirs.Settled)
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	waitFor(t, "alice's command settles", func() bool {
		rec, err := h.store.Get(t.Context(), theirs.TaskID)
		return err == nil && rec.State.Settled()
	})
	mine := ok[*agenttools.Status](m, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "exit-with.sh"), "0"}, "wait_ms": 60000})
	require.True(t, mine.Settled)

	const unknown = "01900000-0000-7000-8000-000000000000"
	id := theirs.TaskID
	sameAsUnknown := func(name string, args func(id string) map[string]any, ref string) {
		t.Helper()
		got := m.fail(name, args(ref))
		want := m.fail(name, args(unknown))
		require.Equal(t, agenttools.CodeUnknownTask, got.Code, "%s with %q", name, ref)
		require.Equal(t, want.Code, got.Code, "%s with %q", name, ref)
		require.Equal(t, strings.ReplaceAll(want.Message, strconv.Quote(unknown), strconv.Quote(ref)), got.Message, "%s with %q", name, ref)
		require.Equal(t, want.Hint, got.Hint)
	}
	taskCalls := []struct {
		tool string
		args func(id string) map[string]any
	}{
		{"command_wait", func(id string) map[string]any {
			return map[string]any{"task_id": id, "timeout_ms": 0, "until_output": ".", "stream": "stdout"}
		}},
		{"command_output", func(id string) map[string]any {
			return map[string]any{"task_id": id, "stream": "stdout", "raw": true}
		}},
		{"command_output", func(id string) map[string]any {
			return map[string]any{"task_id": id, "stream": "stdout", "filter": "."}
		}},
		{"command_output", func(id string) map[string]any {
			return map[string]any{"task_id": id, "stream": "stdout", "unit": "chars", "offset": 1 << 40}
		}},
		{"command_export", func(id string) map[string]any { return map[string]any{"task_ids": []string{id}} }},
		{"command_export", func(id string) map[string]any { return map[string]any{"task_ids": []string{mine.TaskID, id}} }},
		{"command_rerun", func(id string) map[string]any { return map[string]any{"task_id": id} }},
	}
	refs := []string{id, strings.ToUpper(id), "{" + id + "}", "urn:uuid:" + id, id[:8], id[len(id)-12:],
		" " + id, id + "\n", "../" + id, "jobs/" + id, strings.ReplaceAll(id, "-", "")}
	for _, c := range taskCalls {
		for _, ref := range refs {
			sameAsUnknown(c.tool, c.args, ref)
		}
	}
	for _, ref := range refs[1:] {
		sameAsUnknown("command_status", func(id string) map[string]any { return map[string]any{"task_id": id} }, ref)
	}
	entries, err := os.ReadDir(h.r.ExportsDir())
	if !os.IsNotExist(err) {
		require.NoError(t, err)
		require.Empty(t, entries, "a bundle was written for a refused export")
	}
	unread := ok[*agenttools.List](h, "command_list", map[string]any{"unread": true})
	require.Len(t, unread.Commands, 1, "alice's command is still unread")
	require.Equal(t, id, unread.Commands[0].TaskID)
	require.Equal(t, 1, unread.Counters.Finished)
}
