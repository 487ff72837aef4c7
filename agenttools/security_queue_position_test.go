package agenttools_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
)

// A queued command's queue_position was its place among every queued,
// ungrouped command of the host, all sessions together: mallory, queueing
// a probe behind her own running command at the lowest priority, read how
// many commands other sessions had queued (and, moving her priority,
// theirs, and when they left the queue), though none of them holds hers
// back. "Sessions. The agent tools see only their own session's jobs."
func TestQueuePositionCountsNoOtherSessionsUngroupedCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *agenttools.Options) { o.Session = "alice" })
	mallory, err := agenttools.New(agenttools.Options{Runner: h.r, Session: "mallory"})
	require.NoError(t, err)
	m := newHarnessView(h, mallory)
	wait := fixture(t, "wait-for-file.sh")

	// mallory's probe: a command queued after her own running one, last in
	// any order.
	probe := func() int {
		t.Helper()
		gate := ok[*agenttools.Status](m, "run_command_bg", map[string]any{
			"argv": []string{wait, filepath.Join(h.root, "never-"+t.Name()), "0"}})
		m.killAtEnd(gate.TaskID)
		q := ok[*agenttools.Status](m, "run_command_bg", map[string]any{
			"argv": []string{wait, filepath.Join(h.root, "never"), "0"}, "after": []string{gate.TaskID}, "priority": -1000})
		require.Equal(t, bgcmd.StateQueued, q.State)
		st := ok[*agenttools.Status](m, "command_status", map[string]any{"task_id": q.TaskID})
		return st.QueuePosition
	}
	alone := probe()

	// Alice queues three commands behind her own running one.
	aliceGate := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{wait, filepath.Join(h.root, "alice-never"), "0"}})
	h.killAtEnd(aliceGate.TaskID)
	for i := 0; i < 3; i++ {
		q := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
			"argv": []string{wait, filepath.Join(h.root, "x"), "0"}, "after": []string{aliceGate.TaskID}})
		require.Equal(t, bgcmd.StateQueued, q.State)
	}
	withAlice := probe()
	require.Equal(t, alone+1, withAlice, // +1: mallory's own first probe still waits
		"mallory's queue_position counts alice's queued commands (%d alone)", alone)
}
