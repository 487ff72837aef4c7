package runner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// TestAJobCannotForgeItsReapersReport: an in-process job writes a forged
// "done, exit 0" report to every descriptor from 3 up, where its reaper's
// socket to the host would be if it leaked. The host must see the truth:
// the job ran to its end and exited 7, and the reaper serves the next job.
func TestAJobCannotForgeItsReapersReport(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, fixture(t, "forge-reaper-report.sh"))
	for range 2 {
		j := e.start([]string{fixture(t, "forge-reaper-report.sh")}, runner.StartOptions{})
		require.Equal(t, bgcmd.StateRunning, j.State, j.Error)
		s := e.await(j.ID)
		require.Equal(t, bgcmd.StateExited, s.State, s.Error)
		require.NotNil(t, s.ExitCode, s.Error)
		require.Equal(t, 7, *s.ExitCode, "the host took a forged report")
		require.Equal(t, "done\n", e.output(j.ID, bgcmd.Stdout))
	}
}
