package agenttools_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
	"github.com/bgcmd/bgcmd/runner"
)

func TestCommandExportWritesAVerifiableBundleUnderTheHome(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "exit-with.sh"), "4"}, "wait_ms": 30000})
	require.Equal(t, bgcmd.StateExited, st.State)

	e := ok[*agenttools.Export](h, "command_export", map[string]any{"task_ids": []string{st.TaskID}})
	require.Equal(t, filepath.Join(h.home, "exports"), filepath.Dir(e.Path))
	data, err := os.ReadFile(e.Path)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	require.Equal(t, hex.EncodeToString(sum[:]), e.SHA256)
	require.Len(t, e.Tasks, 1)
	require.Len(t, e.Tasks[0].EventHashes, 2)
	require.Len(t, e.Tasks[0].Files, 2)
	require.Contains(t, e.Next, "bgcmd verify --bundle "+e.Path)

	rep, err := runner.VerifyBundle(e.Path)
	require.NoError(t, err)
	require.True(t, rep.OK(), "%v", rep.Problems)
	require.Equal(t, e.Tasks[0].EventHashes, rep.Jobs[0].EventHashes)

	// Another session's command answers as unknown, and nothing is written.
	other, err := h.r.Start(context.Background(), []string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Session: "other"})
	require.NoError(t, err)
	_, err = h.r.Await(context.Background(), other.ID, 0)
	require.NoError(t, err)
	te := h.fail("command_export", map[string]any{"task_ids": []string{st.TaskID, other.ID}})
	require.Equal(t, agenttools.CodeUnknownTask, te.Code)
	entries, err := os.ReadDir(filepath.Join(h.home, "exports"))
	require.NoError(t, err)
	require.Len(t, entries, 1)
}
