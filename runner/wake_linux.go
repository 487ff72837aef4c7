//go:build linux

package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// wakeDirName is the folder beside the database that holds the unix
// datagram sockets on which the process that keeps a job (its supervisor
// while it runs, its holder while it is queued) waits to be told to read
// the job's row again: a kill request, a dispatch, a settle of the queued
// job. A detached supervisor and a holder bind one named by the job's id;
// the in-process supervisors of a process share the process's (procWake),
// named by the host, pid and start time the job's row records for its
// supervisor, and told which job by the datagram. Whoever changes the row
// sends the datagram afterwards (wakeJob, wakeKeeper), from any home that
// shares the database's folder. The keeper also reads the row on a timer,
// so a datagram that does not arrive (an older bgcmd's, a full queue)
// costs time, not the request.
//
// Sockets and not inotify watches: a socket is one descriptor of the
// process that binds it, while inotify instances are few per user (128 by
// default) and shared by all of that user's programs. With an instance
// per running job, 128 jobs took every one, and the user's editor or file
// watcher could get none while they ran.
const wakeDirName = "wake"

// wakeDirOf is the wake folder of st's database, "" for a store without a
// path (see besideDB), whose keepers are woken by NOTIFY and their polls.
func wakeDirOf(st *jobstore.Store) string { return besideDB(st, wakeDirName) }

// wakeListener is a kept job's wake socket: a dirWatch of the socket
// instead of an inotify instance, its C receiving (at most one pending
// value) for each datagram.
type wakeListener struct {
	*dirWatch
	dir  string // the wake folder
	name string // the job's id
	once sync.Once
}

// listenWake binds the wake socket of job id in the wake folder dir
// (created when missing), replacing one a keeper that died left behind,
// and starts reading it: on a thread of its own, outside Go's poller, when
// threadWait is set (a detached supervisor's, see threadReader). The
// caller must Close the listener.
func listenWake(dir, id string, threadWait bool) (*wakeListener, error) {
	if !wakeable(id) {
		return nil, fmt.Errorf("listen for wakes: %q is no job id", id)
	}
	fd, err := bindWakeSocket(dir, id)
	if err != nil {
		return nil, err
	}
	if threadWait {
		r, err := newThreadReader(fd, "wake socket")
		if err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("listen for wakes: %w", err)
		}
		// Close returns once the loop has closed the socket and its stop:
		// a supervisor asked back says it is free right after its job,
		// holding nothing of that job by then.
		released := make(chan struct{})
		halt := func() { r.stop(); <-released }
		w := &wakeListener{dirWatch: &dirWatch{C: make(chan struct{}, 1), halt: halt}, dir: dir, name: id}
		go func() {
			defer close(released)
			defer r.Close() // once its loop is over: no Read runs
			w.loop(r)
		}()
		return w, nil
	}
	w := &wakeListener{dirWatch: &dirWatch{f: os.NewFile(uintptr(fd), "wake"), C: make(chan struct{}, 1)}, dir: dir, name: id}
	go w.loop(w.f)
	return w, nil
}

// bindWakeSocket binds a nonblocking unix datagram socket named name in
// the wake folder dir (created when missing), replacing one a keeper that
// died left behind, and returns its descriptor.
func bindWakeSocket(dir, name string) (int, error) {
	if dir == "" {
		return -1, errors.New("listen for wakes: the store has no folder")
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return -1, fmt.Errorf("listen for wakes: %w", err)
	}
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("listen for wakes: %w", err)
	}
	defer unix.Close(d)
	_ = unix.Unlinkat(d, name, 0) // a socket its last keeper left: nothing else is named so
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("listen for wakes: %w", err)
	}
	// Through the folder's descriptor: the socket lands in the folder
	// just opened, and a long home does not overflow the 108 bytes a
	// socket address holds.
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: wakeAddr(d, name)}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("listen for wakes in %s: %w", dir, err)
	}
	// Private whatever the umask, as every file of the home is (the
	// folder, 0700, already keeps others from reaching it).
	_ = unix.Fchmodat(d, name, 0o600, 0)
	return fd, nil
}

// wakeable reports whether id, a socket's name in the wake folder, is a
// job id in its canonical form: nothing that could name another file.
func wakeable(id string) bool { return jobstore.CanonicalID(id) }

// wakeAddr is the address of the socket name in the open folder d.
func wakeAddr(d int, name string) string { return "/proc/self/fd/" + strconv.Itoa(d) + "/" + name }

// Close stops the listener and removes its socket; C is closed soon
// after.
func (w *wakeListener) Close() {
	w.once.Do(func() {
		w.dirWatch.Close()
		_ = os.Remove(filepath.Join(w.dir, w.name))
	})
}

// wakeJob tells the keeper of job id, if it listens in the wake folder
// dir, to read the job's row again. Best effort: the keeper also reads it
// on a timer.
func wakeJob(dir, id string) {
	if wakeable(id) {
		sendWake(dir, id, []byte{1})
	}
}

// sendWake sends msg to the wake socket name in the folder dir, if one
// listens there.
func sendWake(dir, name string, msg []byte) {
	if dir == "" {
		return
	}
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(d)
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	_ = unix.Sendto(fd, msg, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, &unix.SockaddrUnix{Name: wakeAddr(d, name)})
}
