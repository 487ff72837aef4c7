//go:build linux

package launch

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A supervisor started early from the supervisor binary is let go when the
// run's store turns out to be a PostgreSQL one, which that binary cannot
// open: the runner then starts bgcmd itself.
func TestTakeEarlyLetsGoASupervisorBinaryForPostgres(t *testing.T) {
	exe, err := Executable()
	require.NoError(t, err)
	put := func() (p Proc, peer int) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		t.Cleanup(func() { syscall.Close(fds[1]) })
		var pipe [2]int
		require.NoError(t, syscall.Pipe2(pipe[:], syscall.O_CLOEXEC))
		t.Cleanup(func() { syscall.Close(pipe[1]) })
		p = Proc{PID: -1, Path: "/elsewhere/" + SupervisorName, Conn: fds[0], Status: pipe[0]}
		early.Lock()
		early.p, early.binary, early.held = p, exe, true
		early.Unlock()
		return p, fds[1]
	}
	_, peer := put()
	_, ok := TakeEarly(exe, true)
	require.False(t, ok)
	n, err := syscall.Read(peer, make([]byte, 1))
	require.NoError(t, err)
	require.Zero(t, n, "the one let go was closed: its supervisor reads the end")

	p, _ := put()
	got, ok := TakeEarly(exe, false)
	require.True(t, ok, "a SQLite store's run takes it")
	require.Equal(t, p, got)
	got.Close()
}

func TestTrimDeleted(t *testing.T) {
	require.Equal(t, "/usr/bin/bgcmd", trimDeleted("/usr/bin/bgcmd (deleted)"))
	require.Equal(t, "/usr/bin/bgcmd", trimDeleted("/usr/bin/bgcmd"))
	require.Equal(t, " (deleted)", trimDeleted(" (deleted)"))
}
