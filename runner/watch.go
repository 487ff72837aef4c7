//go:build linux

package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// dirWatch wakes its reader when entries of one directory are created,
// moved, deleted, or the directory itself goes: Await waits on it for the
// settle. Writes to files inside wake only a watch made by
// watchDirWrites. A wake socket (listenWake) reads its datagrams with the
// same loop, f being the socket.
type dirWatch struct {
	f    *os.File
	C    chan struct{}
	once sync.Once
	// halt stops the loop, once, and returns when the loop has released
	// what it reads; nil: close f, in the background.
	halt func()
}

// entryEvents are the events of a directory's entries and of the
// directory itself that wake a dirWatch.
const entryEvents = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_DELETE_SELF |
	unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// watchDir starts watching dir's entries. The caller must Close the watch.
func watchDir(dir string) (*dirWatch, error) { return newDirWatch(dir, entryEvents) }

// watchDirWrites is watchDir that also wakes on every write to a file in
// dir: a readiness wait follows a job's logs with it.
func watchDirWrites(dir string) (*dirWatch, error) {
	return newDirWatch(dir, entryEvents|unix.IN_MODIFY)
}

func newDirWatch(dir string, mask uint32) (*dirWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("watch %s: inotify: %w", dir, err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	w := &dirWatch{f: os.NewFile(uintptr(fd), "inotify"), C: make(chan struct{}, 1)}
	go w.loop(w.f)
	return w, nil
}

// loop pokes C for each read of r that returns, and closes C once r
// fails (closed, or stopped).
func (w *dirWatch) loop(r io.Reader) {
	buf := make([]byte, 4096)
	for {
		_, err := r.Read(buf)
		if err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			close(w.C)
			return
		}
		select {
		case w.C <- struct{}{}:
		default:
		}
	}
}

// Close stops the watch; C is closed soon after. Closing an inotify
// instance waits for the kernel's grace period (milliseconds), so it
// happens in the background rather than on the caller's path (where a
// socket's close is quick anyway).
func (w *dirWatch) Close() {
	w.once.Do(func() {
		if w.halt != nil {
			w.halt()
			return
		}
		go w.f.Close()
	})
}
