package runner

import (
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestARunnerAsksBackAtMostMaxReturningSupervisors: a runner keeping
// spares asks a job's supervisor back while fewer than maxReturning are
// out; a place comes free when a start ends without one, and a closed
// runner, or one without spares, asks none back.
func TestARunnerAsksBackAtMostMaxReturningSupervisors(t *testing.T) {
	r := &Runner{keepSpare: true}
	for i := range maxReturning {
		require.True(t, r.reserveReturn(), "place %d", i)
	}
	require.False(t, r.reserveReturn(), "past maxReturning")
	r.releaseReturn(true, nil)
	require.True(t, r.reserveReturn(), "a place came free")
	require.False(t, r.reserveReturn())
	r.releaseReturn(false, nil) // no reservation: frees nothing
	require.False(t, r.reserveReturn())

	r = &Runner{keepSpare: true, closed: true}
	require.False(t, r.reserveReturn(), "closed")
	require.False(t, (&Runner{}).reserveReturn(), "no spares")
}

// TestASupervisorComesBackWhileFewerThanMaxIdleSparesWait: a supervisor
// that says it is free again becomes the first spare while fewer than
// maxIdleSpares wait, and is let go (its socket closed, so it exits) once
// that many do.
func TestASupervisorComesBackWhileFewerThanMaxIdleSparesWait(t *testing.T) {
	returning := func(r *Runner) (p *supProc, peer *os.File) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		p = &supProc{conn: os.NewFile(uintptr(fds[0]), "host end")}
		peer = os.NewFile(uintptr(fds[1]), "supervisor end")
		t.Cleanup(func() { p.conn.Close(); peer.Close() })
		_, err = peer.Write([]byte(spareAgain + "\n"))
		require.NoError(t, err)
		require.True(t, r.reserveReturn())
		r.returns.Add(1)
		return p, peer
	}
	r := &Runner{keepSpare: true}
	for range maxIdleSpares - 1 {
		r.spares = append(r.spares, &supProc{})
	}
	p, _ := returning(r)
	r.awaitReturn(p)
	require.Len(t, r.spares, maxIdleSpares)
	require.Same(t, p, r.spares[0], "it came back first in line")
	require.Zero(t, r.returnSlots)

	q, peer := returning(r)
	r.awaitReturn(q)
	require.Len(t, r.spares, maxIdleSpares, "no more than maxIdleSpares wait")
	require.NotContains(t, r.spares, q)
	n, err := peer.Read(make([]byte, 1))
	require.Zero(t, n)
	require.ErrorIs(t, err, io.EOF, "the supervisor let go reads the end of its hand-over")
	require.Zero(t, r.returnSlots)
	require.NotNil(t, r.trim, "more than spareCount wait")
	r.trim.Stop()
}
