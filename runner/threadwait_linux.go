//go:build linux

package runner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// A detached supervisor runs one job, and while it runs only three of its
// goroutines wait on descriptors: the two pumps and the wake socket's
// reader. Parked in Go's poller, they cost the capture dearly: while any
// goroutine waits there, every thread that runs out of work polls the
// poller first (an epoll_pwait each time), and a capture's pump and
// hasher run out of work thousands of times per GiB. The capture floor
// with one idle pipe reader added made 19,700 epoll_pwait calls per GiB
// instead of 4,500, and took 0.13 s more CPU per GiB (about 9%). So in a
// detached supervisor these three wait in poll(2) on threads of their
// own, outside the poller, each wait stopped by an eventfd. (In process,
// the host has waiters of its own in the poller anyway, and a thread per
// wait of each running job would cost threads for nothing.)

// threadWaitStop ends the waits of threadWait: an eventfd that, once
// written, stays readable.
type threadWaitStop struct {
	mu     sync.Mutex
	efd    int
	closed bool // a stop after close must not write to a number reused since
}

func newThreadWaitStop() (*threadWaitStop, error) {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	return &threadWaitStop{efd: efd}, nil
}

// stop ends the wait under way, if any, and every later one. It may be
// called from any goroutine, more than once.
func (s *threadWaitStop) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return // nothing waits any more
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = unix.Write(s.efd, one[:])
}

// close releases the eventfd, once no wait can start any more; a later
// stop does nothing.
func (s *threadWaitStop) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		_ = unix.Close(s.efd)
	}
}

// wait blocks in poll(2), on this goroutine's thread, until fd has
// something to read (data, its end, or an error a read reports) or s is
// stopped; it returns false when stopped.
func (s *threadWaitStop) wait(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(s.efd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case fds[1].Revents != 0:
			return false
		}
		return true // readable, or a poll error the read then reports
	}
}

// threadReader reads a nonblocking descriptor it owns, waiting in
// threadWait whenever there is nothing to read. Close only once no Read
// runs: a Read waits on the descriptor's number, which a close would free
// for reuse.
type threadReader struct {
	fd   int
	name string
	s    *threadWaitStop
}

// newThreadReader takes over fd, which must be nonblocking.
func newThreadReader(fd int, name string) (*threadReader, error) {
	s, err := newThreadWaitStop()
	if err != nil {
		return nil, err
	}
	return &threadReader{fd: fd, name: name, s: s}, nil
}

// Read reads into b: at least one byte, io.EOF at the end, or
// os.ErrClosed once stopped.
func (r *threadReader) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(r.fd, b)
		switch {
		case err == nil && n == 0 && len(b) > 0:
			return 0, io.EOF
		case err == nil:
			return n, nil
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EAGAIN):
			return 0, &os.PathError{Op: "read", Path: r.name, Err: err}
		}
		if !r.s.wait(r.fd) {
			return 0, os.ErrClosed
		}
	}
}

// stop makes the Read under way, if any, and every later one return
// os.ErrClosed.
func (r *threadReader) stop() { r.s.stop() }

// Close closes the descriptor and the stop; call once no Read runs.
func (r *threadReader) Close() error {
	r.s.close()
	return unix.Close(r.fd)
}
