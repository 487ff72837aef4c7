//go:build linux

package runner

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// waitingSupervisor is a stand-in for a spare supervisor: the host's end of
// a socket pair, whose other end (returned) reads the end of the hand-over
// when the supervisor is let go, and a process that has already exited.
func waitingSupervisor(t *testing.T) (*supProc, *os.File) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	exited := make(chan struct{})
	close(exited)
	p := &supProc{conn: os.NewFile(uintptr(fds[0]), "host end"), exited: exited}
	peer := os.NewFile(uintptr(fds[1]), "supervisor end")
	t.Cleanup(func() { p.conn.Close(); peer.Close() })
	return p, peer
}

// letGoOf says whether the supervisor at the far end of peer was let go:
// its hand-over ended (a read finds the end, where an open one has
// nothing to read yet).
func letGoOf(t *testing.T, peer *os.File) bool {
	n, _, err := unix.Recvfrom(int(peer.Fd()), make([]byte, 1), unix.MSG_DONTWAIT)
	if err == unix.EAGAIN {
		return false
	}
	require.NoError(t, err)
	require.Zero(t, n, "nothing is written to a waiting supervisor")
	return true
}

// TestSparesBeyondTwoAreLetGoOnceNoStartTookOne: supervisors waiting beyond
// spareCount stay while a start took a spare within spareTrimAfter (the
// trim looks again later), and the last in line are let go once none did;
// the first spareCount stay, and a closed runner trims nothing.
func TestSparesBeyondTwoAreLetGoOnceNoStartTookOne(t *testing.T) {
	r := &Runner{keepSpare: true}
	var peers []*os.File
	for range maxIdleSpares {
		p, peer := waitingSupervisor(t)
		r.spares, peers = append(r.spares, p), append(peers, peer)
	}
	kept := append([]*supProc(nil), r.spares[:spareCount]...)

	r.lastTake = time.Now()
	r.trimSpares()
	require.Len(t, r.spares, maxIdleSpares, "a start took a spare just now")
	require.NotNil(t, r.trim, "the trim looks again later")
	r.trim.Stop()

	r.lastTake = time.Now().Add(-2 * spareTrimAfter)
	r.trimSpares()
	r.spareSpawns.Wait()
	require.Equal(t, kept, r.spares, "the first in line stay")
	require.Nil(t, r.trim)
	for i, peer := range peers {
		require.Equal(t, i >= spareCount, letGoOf(t, peer), "supervisor %d", i)
	}

	closed := &Runner{keepSpare: true, closed: true}
	for range spareCount + 1 {
		p, _ := waitingSupervisor(t)
		closed.spares = append(closed.spares, p)
	}
	closed.trimSpares()
	require.Len(t, closed.spares, spareCount+1, "Close lets them go, not the trim")
}

// TestASupervisorComingBackBeyondTwoArmsTheTrim: a supervisor that comes
// back to a runner with spareCount spares already waiting is kept, and the
// trim is armed; one that comes back to fewer arms nothing.
func TestASupervisorComingBackBeyondTwoArmsTheTrim(t *testing.T) {
	r := &Runner{keepSpare: true}
	back := func() {
		p, peer := waitingSupervisor(t)
		_, err := peer.Write([]byte(spareAgain + "\n"))
		require.NoError(t, err)
		require.True(t, r.reserveReturn())
		r.returns.Add(1)
		r.awaitReturn(p)
	}
	for range spareCount {
		back()
		require.Nil(t, r.trim, "%d waiting", len(r.spares))
	}
	back()
	require.Len(t, r.spares, spareCount+1)
	require.NotNil(t, r.trim)
	r.trim.Stop()
}
