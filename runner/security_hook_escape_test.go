//go:build linux

package runner_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// TestNothingAJobsHookLeftRunningOutlivesIt: an on_settle hook that leaves
// a descendant in a session of its own (setsid) gets no more than the job
// itself does. A detached supervisor, the subreaper of both, kills and
// reaps what the hook left before it exits; in process, the hook runs
// under a reaper as the job did, which kills it once the hook has ended.
func TestNothingAJobsHookLeftRunningOutlivesIt(t *testing.T) {
	t.Parallel()
	for _, detached := range []bool{true, false} {
		t.Run(map[bool]string{true: "detached", false: "in-process"}[detached], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, detached)
			dir := t.TempDir()
			e.policy.OnSettle = []string{fixture(t, "on-settle-escape.sh"), dir}
			j := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Cwd: e.root})
			e.await(j.ID)
			h := hookRun(t, e.store, j.ID)
			require.Equal(t, jobstore.HookOK, h.Outcome, h.Error)
			b, err := os.ReadFile(filepath.Join(dir, j.ID+".pid"))
			require.NoError(t, err)
			left, err := strconv.Atoi(strings.TrimSpace(string(b)))
			require.NoError(t, err)
			t.Cleanup(func() {
				if isHookSleeper(left) {
					_ = syscall.Kill(left, syscall.SIGKILL)
				}
			})
			if detached {
				rec, err := e.store.Get(t.Context(), j.ID)
				require.NoError(t, err)
				waitFor(t, "the job's supervisor to exit", func() bool { return !processAlive(rec.SupervisorPID) })
			}
			waitFor(t, "the hook's setsid descendant to be gone", func() bool { return !isHookSleeper(left) })
		})
	}
}

// isHookSleeper says whether pid is still on-settle-escape.sh's sleeper
// (not a process that took its pid since).
func isHookSleeper(pid int) bool { return isSleep(pid, "311") }

// TestAHookThatOverrunsOrCannotStartIsRecordedSo: a hook past its timeout
// is killed and recorded as timed out; one whose program is missing as not
// started; neither changes the job. In both modes: in process the hook
// runs under a reaper.
func TestAHookThatOverrunsOrCannotStartIsRecordedSo(t *testing.T) {
	t.Parallel()
	for _, detached := range []bool{true, false} {
		t.Run(map[bool]string{true: "detached", false: "in-process"}[detached], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, detached)
			never := filepath.Join(t.TempDir(), "never")
			e.policy.OnSettle = []string{fixture(t, "wait-for-file.sh"), never}
			e.policy.OnSettleTimeout = 300 * time.Millisecond
			j := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Cwd: e.root})
			require.Equal(t, bgcmd.StateExited, e.await(j.ID).State)
			h := hookRun(t, e.store, j.ID)
			require.Equal(t, jobstore.HookTimeout, h.Outcome, h.Error)
			require.Contains(t, h.Error, "did not finish within 300ms")
			require.Nil(t, h.ExitCode)

			e.policy.OnSettle = []string{filepath.Join(t.TempDir(), "no-such-hook")}
			j = e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Cwd: e.root})
			require.Equal(t, bgcmd.StateExited, e.await(j.ID).State)
			h = hookRun(t, e.store, j.ID)
			require.Equal(t, jobstore.HookStartFailed, h.Outcome, h.Error)
			require.Contains(t, h.Error, "no-such-hook")
			require.Contains(t, h.Error, "could not start")
		})
	}
}
