package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// killStray SIGKILLs pid at the end of the test when it still runs as the
// process the job started: a failed containment must not leave it behind.
func killStray(t *testing.T, pid int) {
	t.Cleanup(func() {
		if pid > 0 && processAlive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// TestTimeoutReachesAMainProcessThatLeftItsGroup: the job's main
// process moves itself out of the process group bgcmd made for it, into
// its parent's group (the reaper's or the detached supervisor's, in the
// same session, which setpgid allows), then sleeps. Its timeout must still
// end it, and the job settle as timed out within timeout + grace: the
// timeout is the promise "every job is bounded", whatever the job does
// with process groups.
func TestTimeoutReachesAMainProcessThatLeftItsGroup(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"in-process", "detached"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newModeEnv(t, mode)
			script := fixture(t, "leave-group.sh")
			e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, script)
			j := e.start([]string{script}, runner.StartOptions{Timeout: time.Second})
			killStray(t, j.PID)
			require.Equal(t, bgcmd.StateRunning, j.State, j.Error)
			waitFor(t, "the job to leave its group", func() bool {
				s, err := e.r.Status(context.Background(), j.ID)
				return err == nil && (s.State.Settled() || strings.Contains(e.liveStdout(j.ID), "moved"))
			})
			// Timeout 1s, kill grace 2s: 20s is far past the bound.
			s, err := e.r.Await(context.Background(), j.ID, 20*time.Second)
			require.NoError(t, err)
			require.True(t, s.State.Settled(),
				"the job's main process left its group and outlived its timeout: still %s after 20s (timeout 1s, grace 2s)", s.State)
			require.Equal(t, bgcmd.StateTimeout, s.State, s.Error)
			require.False(t, processAlive(j.PID), "the main process outlived its settled job")
		})
	}
}

// liveStdout is the job's stdout so far (the live log while it runs).
func (e *env) liveStdout(id string) string {
	e.t.Helper()
	b, _ := os.ReadFile(filepath.Join(e.home, "jobs", id, "stdout.log"))
	return string(b)
}
