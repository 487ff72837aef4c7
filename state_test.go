package bgcmd_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

func TestStatesAreFreshSlicesInLifecycleOrder(t *testing.T) {
	all := bgcmd.States()
	require.Equal(t, []bgcmd.State{bgcmd.StateQueued, bgcmd.StateRunning}, all[:2], "the unsettled states come first")
	settled := bgcmd.SettledStates()
	require.Equal(t, all[2:], settled)
	for _, s := range all {
		require.True(t, s.Valid(), s)
	}
	for _, s := range settled {
		require.True(t, s.Settled(), s)
		require.True(t, (&bgcmd.Status{State: s}).Settled(), s)
		require.True(t, (&bgcmd.Event{To: s}).Settled(), s)
	}
	all[0], settled[0] = "changed", "changed"
	require.Equal(t, bgcmd.StateQueued, bgcmd.States()[0], "a caller cannot change the list")
	require.Equal(t, bgcmd.StateExited, bgcmd.SettledStates()[0])
	require.Equal(t, "queued,running", strings.Join(bgcmd.StateNames(bgcmd.States()[:2]), ","))
	require.False(t, bgcmd.State("").Valid())
	require.False(t, (&bgcmd.Event{To: bgcmd.StateRunning}).Settled())
}

func TestStreamAndSHA256Names(t *testing.T) {
	require.True(t, bgcmd.Stdout.Valid())
	require.True(t, bgcmd.Stderr.Valid())
	require.False(t, bgcmd.Stream("stdin").Valid())
	good := strings.Repeat("0123456789abcdef", 4)
	require.True(t, bgcmd.ValidSHA256(good))
	for _, bad := range []string{"", good[:63], good + "0", strings.ToUpper(good), "../" + good[3:], good[:63] + "g"} {
		require.False(t, bgcmd.ValidSHA256(bad), "%q is never joined into a path", bad)
	}
}

func TestJobDuration(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := start.Add(90 * time.Second)
	require.Zero(t, (&bgcmd.Job{}).Duration(now), "not started")
	require.Equal(t, 90*time.Second, (&bgcmd.Job{StartedAt: &start}).Duration(now), "running: until now")
	end := start.Add(time.Second)
	require.Equal(t, time.Second, (&bgcmd.Job{StartedAt: &start, FinishedAt: &end}).Duration(now), "settled: until it finished")
}
