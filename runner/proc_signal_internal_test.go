//go:build linux

package runner

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSignalIfSignalsOnlyTheProcessTheCheckPassed: a scan's kill reaches a
// process only when the process now at its pid is the one the scan read
// (here: the same start time), and a pid whose process is gone is never
// signalled.
func TestSignalIfSignalsOnlyTheProcessTheCheckPassed(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exec sleep 60")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	st, err := readProcStat(pid)
	require.NoError(t, err)

	other := proc{pid: pid, ppid: st.ppid, live: true, start: st.start + 1} // another process's start time
	require.False(t, other.signal(syscall.SIGKILL), "a process that took the pid was signalled")
	require.True(t, alive(pid, st.start), "a process that took the pid was killed")

	same := proc{pid: pid, ppid: st.ppid, live: true, start: st.start}
	require.True(t, same.signal(syscall.SIGKILL))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	ws := ee.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "%v", err)

	// Reaped: the pid names no process (or, rarely, a new one of another
	// start time); either way nothing is signalled.
	require.False(t, same.signal(syscall.SIGKILL))
}
