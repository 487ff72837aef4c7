//go:build linux

package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// procWakePrefix starts the name of a process's wake socket (procWakeName).
const procWakePrefix = "p-"

// procWakeName is the name, in a wake folder, of the wake socket of the
// process pid started at start on the host hostID: the process the row of a
// job supervised in process names as its supervisor. It is "" for a host id
// that could not name a file safely.
func procWakeName(hostID string, pid int, start int64) string {
	if !wakeable(hostID) || pid <= 0 {
		return ""
	}
	return procWakePrefix + hostID + "-" + strconv.Itoa(pid) + "-" + strconv.FormatInt(start, 10)
}

// procWake is this process's wake socket in one wake folder. The
// in-process supervisors of every runner of the process that uses the
// folder share it: a datagram names the job to wake (its id), the socket's
// name the process (procWakeName). One socket bound while a runner is
// open, instead of one bound and removed for every job.
type procWake struct {
	key       string // in procWakes
	dir, name string
	sock      *os.File
	refs      int // runners holding it, under procWakes' lock

	mu   sync.Mutex
	jobs map[string]chan struct{}
}

// procWakes holds this process's wake sockets by folder and host id.
var procWakes = struct {
	sync.Mutex
	byKey map[string]*procWake
}{byKey: map[string]*procWake{}}

// acquireProcWake returns this process's wake socket in dir for the host
// hostID, binding it (start is this process's start time) when no runner
// holds it yet. Each acquire is matched by one release.
func acquireProcWake(dir, hostID string, start int64) (*procWake, error) {
	procWakes.Lock()
	defer procWakes.Unlock()
	key := dir + "\x00" + hostID
	if p := procWakes.byKey[key]; p != nil {
		p.refs++
		return p, nil
	}
	name := procWakeName(hostID, os.Getpid(), start)
	if dir == "" || name == "" {
		return nil, errors.New("listen for wakes: no folder or no host id to name the socket by")
	}
	fd, err := bindWakeSocket(dir, name)
	if err != nil {
		return nil, err
	}
	p := &procWake{key: key, dir: dir, name: name, sock: os.NewFile(uintptr(fd), "wake"), refs: 1,
		jobs: map[string]chan struct{}{}}
	go p.loop()
	procWakes.byKey[key] = p
	return p, nil
}

// release drops one runner's hold; the last one closes the socket and
// removes it.
func (p *procWake) release() {
	procWakes.Lock()
	defer procWakes.Unlock()
	if p.refs--; p.refs > 0 {
		return
	}
	delete(procWakes.byKey, p.key)
	_ = p.sock.Close()
	_ = os.Remove(filepath.Join(p.dir, p.name))
}

// listen returns the channel that receives (at most one pending value) a
// value for each datagram naming job id, and the call that stops it.
func (p *procWake) listen(id string) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	p.mu.Lock()
	p.jobs[id] = c
	p.mu.Unlock()
	return c, func() {
		p.mu.Lock()
		if p.jobs[id] == c {
			delete(p.jobs, id)
		}
		p.mu.Unlock()
	}
}

// loop hands each datagram to the job it names, until the socket closes.
// A datagram naming no job listening here is dropped: the sender's row
// is the truth, and the jobs read it on a timer as well.
func (p *procWake) loop() {
	buf := make([]byte, 64)
	for {
		n, err := p.sock.Read(buf)
		if err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			return
		}
		p.mu.Lock()
		c := p.jobs[string(buf[:n])]
		p.mu.Unlock()
		if c != nil {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
}

// wakeProcess tells the process whose wake socket in dir is name that job
// id's row changed. Best effort, as wakeJob.
func wakeProcess(dir, name, id string) {
	if name != "" && wakeable(id) {
		sendWake(dir, name, []byte(id))
	}
}

// procWakeOwner parses a process wake socket's name: the host id, pid and
// start time it names, ok false for any other name.
func procWakeOwner(name string) (hostID string, pid int, start int64, ok bool) {
	rest, found := strings.CutPrefix(name, procWakePrefix)
	if !found || len(rest) < 37 || rest[36] != '-' {
		return "", 0, 0, false
	}
	hostID = rest[:36]
	p, s, found := strings.Cut(rest[37:], "-")
	if !found {
		return "", 0, 0, false
	}
	pid, perr := strconv.Atoi(p)
	start, serr := strconv.ParseInt(s, 10, 64)
	if perr != nil || serr != nil || procWakeName(hostID, pid, start) != name {
		return "", 0, 0, false
	}
	return hostID, pid, start, true
}

// processWake returns this process's wake socket for the runner's
// in-process jobs, taking it at the first call; nil when it cannot be had
// (each job then binds a socket of its own, as a detached supervisor's
// does).
func (r *Runner) processWake() *procWake {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.procWakeTaken {
		r.procWakeTaken = true
		r.procWake, _ = acquireProcWake(wakeDirOf(r.store), r.store.HostID(), r.selfTime)
	}
	return r.procWake
}

// releaseProcWake lets go of the runner's hold on its process's wake
// socket, once its in-process jobs have all settled.
func (r *Runner) releaseProcWake() {
	r.mu.Lock()
	p := r.procWake
	r.procWake = nil
	r.mu.Unlock()
	if p != nil {
		p.release()
	}
}

// wakeKeeper tells whoever keeps the job of rec to read its row again:
// the job's own wake socket (a detached supervisor's, a queued job's
// holder's) and, for a job supervised in process, its process's.
func wakeKeeper(dir string, rec *jobstore.Record) {
	wakeJob(dir, rec.ID)
	if !rec.Detached {
		wakeProcess(dir, procWakeName(rec.HostID, rec.SupervisorPID, rec.SupervisorStart), rec.ID)
	}
}

// staleProcWake reports whether name is the wake socket of a process of
// the host hostID that is gone (it died before its runners closed).
func staleProcWake(name, hostID string) bool {
	host, pid, start, ok := procWakeOwner(name)
	return ok && host == hostID && !alive(pid, start)
}
