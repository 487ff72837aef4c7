//go:build linux

package runner_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// TestADetachedSupervisorLeavesNothingOfItsJobsHookRunning: an on_settle
// hook that leaves a descendant in a session of its own (setsid) gets no
// more than the job itself does. The job's supervisor, the subreaper of
// both, kills and reaps what the hook left before it exits, as it does
// for the job's own descendants.
func TestADetachedSupervisorLeavesNothingOfItsJobsHookRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
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
	rec, err := e.store.Get(t.Context(), j.ID)
	require.NoError(t, err)
	waitFor(t, "the job's supervisor to exit", func() bool { return !processAlive(rec.SupervisorPID) })
	waitFor(t, "the hook's setsid descendant to be gone", func() bool { return !isHookSleeper(left) })
}

// isHookSleeper says whether pid is still on-settle-escape.sh's sleeper
// (not a process that took its pid since).
func isHookSleeper(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return err == nil && processAlive(pid) && string(b) == "sleep\x00311\x00"
}
