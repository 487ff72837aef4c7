package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
)

// TestThreadReaderReadsToTheEndAndStopsAtOnce: a thread reader returns
// what the pipe holds, waits in poll(2) for more, sees the writer's end
// as io.EOF, and a stop ends a Read that waits, and every later one, with
// os.ErrClosed.
func TestThreadReaderReadsToTheEndAndStopsAtOnce(t *testing.T) {
	t.Parallel()
	r, w, err := makePipe(true)
	require.NoError(t, err)
	defer r.Close()
	buf := make([]byte, 16)

	go func() {
		time.Sleep(20 * time.Millisecond) // the Read below waits first
		_, _ = w.Write([]byte("hello"))
		w.Close()
	}()
	n, err := r.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "hello", string(buf[:n]))
	_, err = r.Read(buf)
	require.ErrorIs(t, err, io.EOF)

	r2, w2, err := makePipe(true)
	require.NoError(t, err)
	defer w2.Close() // held open: only the stop ends the Read
	done := make(chan error, 1)
	go func() { _, err := r2.Read(buf); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("Read returned %v with nothing written", err)
	case <-time.After(20 * time.Millisecond):
	}
	r2.stop()
	select {
	case err := <-done:
		require.ErrorIs(t, err, os.ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("a stopped Read still waits")
	}
	_, err = r2.Read(buf)
	require.ErrorIs(t, err, os.ErrClosed, "every later Read")
	require.NoError(t, r2.Close())
}

// TestThreadWaitStopAfterCloseWritesNothing: a stop that comes after its
// eventfd was closed must not write to whatever file took that number
// since (a wake listener's Close after its loop ended, say).
func TestThreadWaitStopAfterCloseWritesNothing(t *testing.T) {
	t.Parallel()
	s, err := newThreadWaitStop()
	require.NoError(t, err)
	efd := s.efd
	s.close()
	// Another file takes the number, as the next open would: a pipe's
	// write end, its read end kept above that number.
	var fds [2]int
	require.NoError(t, unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK))
	rfd, err := unix.FcntlInt(uintptr(fds[0]), unix.F_DUPFD_CLOEXEC, efd+1)
	require.NoError(t, err)
	defer unix.Close(rfd)
	wfd, err := unix.FcntlInt(uintptr(fds[1]), unix.F_DUPFD_CLOEXEC, efd+1)
	require.NoError(t, err)
	defer unix.Close(wfd)
	for _, fd := range fds {
		if fd != efd {
			unix.Close(fd)
		}
	}
	require.NoError(t, unix.Dup3(wfd, efd, unix.O_CLOEXEC))
	defer unix.Close(efd)
	s.stop()
	_, err = unix.Read(rfd, make([]byte, 8))
	require.ErrorIs(t, err, unix.EAGAIN, "the stop wrote to the file that reused its number")
}

// TestWakeListenerInAThreadWakesAndCloses: the wake socket of a detached
// supervisor, read on a thread of its own, receives each wake and closes
// its channel once closed, removing its socket.
func TestWakeListenerInAThreadWakesAndCloses(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "wake")
	id := uuid.NewString()
	w, err := listenWake(dir, id, true)
	require.NoError(t, err)
	for range 3 {
		wakeJob(dir, id)
		select {
		case _, ok := <-w.C:
			require.True(t, ok)
		case <-time.After(10 * time.Second):
			t.Fatal("no wake")
		}
	}
	w.Close()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-w.C:
			if ok {
				continue // a wake still pending
			}
			_, err := os.Lstat(filepath.Join(dir, id))
			require.True(t, errors.Is(err, os.ErrNotExist), "the socket is removed")
			return
		case <-deadline:
			t.Fatal("C still open after Close")
		}
	}
}

// TestDrainPumpsEndsReadsOfAPipeSomeoneKeepsOpen: when a process that
// escaped the job keeps its output pipes open, drainPumps stops the pumps'
// reads after drainGrace, whichever way they wait, and the captures keep
// what was written before.
func TestDrainPumpsEndsReadsOfAPipeSomeoneKeepsOpen(t *testing.T) {
	t.Parallel()
	for _, threadWaits := range []bool{true, false} {
		readers, writers, err := makePipes(threadWaits)
		require.NoError(t, err)
		dir := t.TempDir()
		pumped := make(chan struct{}, 2)
		var caps [2]*artifacts.Capture
		for i := range 2 {
			caps[i], err = artifacts.NewCapture(artifacts.CaptureOptions{Path: filepath.Join(dir, fmt.Sprint(i, ".log"))})
			require.NoError(t, err)
			go pump(readers[i], caps[i], bgcmd.Stdout, make(chan bgcmd.Stream, 1), make(chan error, 1), pumped)
		}
		_, err = writers[0].Write([]byte("before\n"))
		require.NoError(t, err)
		start := time.Now()
		drainPumps(readers, pumped) // the writers stay open: only the grace ends it
		require.GreaterOrEqual(t, time.Since(start), drainGrace, "threadWaits %v", threadWaits)
		for i := range 2 {
			require.NoError(t, caps[i].Close())
			writers[i].Close()
		}
		require.EqualValues(t, len("before\n"), caps[0].Summary().Bytes, "threadWaits %v", threadWaits)
	}
}
