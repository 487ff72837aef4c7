//go:build linux

package spawn

import (
	"os"
	"runtime"
	"syscall"

	"github.com/bgcmd/bgcmd/internal/launch"
)

// Proc is a supervisor process just started: it reads the store to open
// and then its job from Conn, and writes its report on the pipe whose
// read end is Status. Nobody has waited for it yet (Wait).
type Proc struct {
	// PID is the supervisor's process id; this process is its parent
	// until Wait has returned, so the id names it until then.
	PID int
	// Path is the file it was started from: bgcmd's supervisor binary
	// (launch.SupervisorPath), or the binary Start was given.
	Path string
	// Conn is the starting process's end of the hand-over socket,
	// non-blocking: closing it ends a read that waits on it.
	Conn *os.File
	// Status is the read end of the supervisor's report pipe.
	Status *os.File
}

// files wraps the descriptors of p, a supervisor just started, in files
// read and written through the runtime's poller (both are non-blocking).
func files(p launch.Proc) *Proc {
	return &Proc{PID: p.PID, Path: p.Path,
		Conn: os.NewFile(uintptr(p.Conn), "handoff"), Status: os.NewFile(uintptr(p.Status), "status")}
}

// Wait waits for the supervisor to exit and returns how it ended and its
// resource use (its CPU time covers its threads and the children it
// reaped).
func (p *Proc) Wait() (syscall.WaitStatus, *syscall.Rusage, error) {
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	for {
		_, err := syscall.Wait4(p.PID, &ws, 0, &ru)
		if err != syscall.EINTR {
			return ws, &ru, err
		}
	}
}

// Close lets a supervisor that was handed nothing exit: it reads the end
// of its hand-over socket.
func (p *Proc) Close() {
	p.Conn.Close()
	p.Status.Close()
}

// Start starts binary as a detached supervisor (launch.Start: from its
// supervisor binary unless the supervisor will open a PostgreSQL store,
// postgres). logf, when not nil, is its stdout and stderr from its first
// instruction; else they are the null device. hold, when not nil, is
// given the supervisor's end of the hand-over socket before this process
// closes it.
func Start(binary string, postgres bool, logf *os.File, hold func(fd int)) (*Proc, error) {
	logFD := -1
	if logf != nil {
		logFD = int(logf.Fd())
	}
	p, err := launch.Start(binary, postgres, logFD, hold)
	runtime.KeepAlive(logf) // its descriptor stays open until the supervisor has it
	if err != nil {
		return nil, err
	}
	return files(p), nil
}

// TakeEarly returns the supervisor bgcmd's early start started
// (launch.StartEarly), once, when it runs binary and can open the store
// (postgres: a PostgreSQL one, which only binary itself can, not its
// supervisor binary); else nil (one that cannot is let go: the caller
// starts its own).
func TakeEarly(binary string, postgres bool) *Proc {
	p, ok := launch.TakeEarly(binary, postgres)
	if !ok {
		return nil
	}
	return files(p)
}
