//go:build linux

package runner

import (
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// endSupervisorTree ends a process with all it started, one that left its
// group and session (setsid) among them, and nothing when the pid's start
// time is not the one given (another process took the pid).
func TestEndSupervisorTreeEndsEverythingBelowIt(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("/bin/sh", "-c", "setsid sleep 4251 & sleep 4252 & wait")
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		for _, c := range descendants(cmd.Process.Pid) {
			_ = syscall.Kill(c.pid, syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
	})
	pid := cmd.Process.Pid
	below := func() []proc {
		var live []proc
		for _, c := range descendants(pid) {
			if c.live {
				live = append(live, c)
			}
		}
		return live
	}
	require.Eventually(t, func() bool { return len(below()) == 2 }, time.Minute, 10*time.Millisecond, "two sleepers below the shell")
	kids := below()

	endSupervisorTree(pid, processStart(pid)+1) // not that process
	require.Len(t, below(), 2, "a process of another start time is left alone")
	require.NotEqual(t, byte('T'), procStateOf(pid))

	endSupervisorTree(pid, processStart(pid))
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the shell did not end")
	}
	for _, c := range kids {
		require.Eventually(t, func() bool {
			st, err := readProcStat(c.pid)
			return err != nil || st.start != c.start || !running(c.pid, st)
		}, time.Minute, 10*time.Millisecond, "sleeper %s ended", strconv.Itoa(c.pid))
	}
}

// procStateOf is pid's /proc state letter, or 0.
func procStateOf(pid int) byte {
	st, err := readProcStat(pid)
	if err != nil {
		return 0
	}
	return st.state
}
