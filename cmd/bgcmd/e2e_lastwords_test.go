package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A supervisor that dies leaves its job directory, and with it the only
// account of why: what it printed. The job's error keeps that account.
// SIGQUIT makes a Go supervisor print "SIGQUIT: quit" and its goroutines,
// as a runtime fault or a panic would print theirs, and exit.

// TestE2EAQueuedJobsHolderThatDiedLeavesItsLastWordsInTheError: the holder
// of a queued job dies; reconcile settles the job orphaned with what the
// holder printed.
func TestE2EAQueuedJobsHolderThatDiedLeavesItsLastWordsInTheError(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	gate, a := h.holdGroupOne()
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600); h.bgcmd("wait", a) })
	b := strings.TrimSpace(h.ok("run", "--group", "one", "--", fixture(t, "exit-with.sh"), "0"))
	require.Equal(t, "queued", h.peekState(b))
	quitSupervisor(t, h, b)
	h.ok("reconcile")
	requireLastWords(t, h, b, "died while the job was queued")
}

// TestE2EARunningJobsSupervisorThatDiedLeavesItsLastWordsInTheError: the
// supervisor of a running job dies; reconcile kills the job and settles it
// orphaned with what the supervisor printed.
func TestE2EARunningJobsSupervisorThatDiedLeavesItsLastWordsInTheError(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := strings.TrimSpace(h.ok("run", "--", fixture(t, "wait-for-file.sh"), filepath.Join(h.root, "never"), "0"))
	require.Equal(t, "running", h.peekState(id))
	quitSupervisor(t, h, id)
	h.ok("reconcile")
	requireLastWords(t, h, id, "without recording an exit")
}

// quitSupervisor sends SIGQUIT to the detached supervisor of job id and
// waits for it to be gone.
func quitSupervisor(t *testing.T, h *home, id string) {
	t.Helper()
	pid := int(h.status(id)["supervisor_pid"].(float64))
	require.Greater(t, pid, 1)
	require.NoError(t, syscall.Kill(pid, syscall.SIGQUIT))
	eventually(t, "the supervisor to die", func() bool { return syscall.Kill(pid, 0) != nil || isZombie(pid) })
}

// requireLastWords checks that job id settled orphaned with an error that
// says why (what) and ends with the bounded excerpt, on one line, of its
// supervisor's goroutine dump: longer than the excerpt, so both its ends.
func requireLastWords(t *testing.T, h *home, id, what string) {
	t.Helper()
	s := h.status(id)
	require.Equal(t, "orphaned", s["state"])
	msg, _ := s["error"].(string)
	require.Contains(t, msg, what)
	require.Contains(t, msg, "its log reads: SIGQUIT: quit", "the supervisor's own account of its end")
	require.Contains(t, msg, " … ", "a goroutine dump is longer than the excerpt: its two ends are kept")
	require.LessOrEqual(t, len(msg), 2048, "the log's excerpt is bounded: %q", msg)
	require.NotContains(t, msg, "\n")
}
