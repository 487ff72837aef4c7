//go:build linux

package spawn

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

// Command is the hidden first argument with which the bgcmd binary is
// re-executed as a detached supervisor.
const Command = "__supervise"

// Proc is a supervisor process just started: it reads the store to open
// and then its job from Conn, and writes its report on the pipe whose
// read end is Status. Nobody has waited for it yet (Wait).
type Proc struct {
	// PID is the supervisor's process id; this process is its parent
	// until Wait has returned, so the id names it until then.
	PID int
	// Path is the file it was started from: bgcmd's supervisor binary
	// (SupervisorPath), or the binary Start was given.
	Path string
	// Conn is the starting process's end of the hand-over socket,
	// non-blocking: closing it ends a read that waits on it.
	Conn *os.File
	// Status is the read end of the supervisor's report pipe.
	Status *os.File
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

// Env is a supervisor's own environment: only what it needs to run, never
// a job's (which travels on the hand-over socket).
func Env() []string {
	var env []string
	for _, k := range []string{"PATH", "TMPDIR", "GORACE", "GOCOVERDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Start starts binary as a detached supervisor, from its supervisor binary
// when it has one (SupervisorPath) and the supervisor will not open a
// PostgreSQL store (postgres: the supervisor binary has no PostgreSQL
// driver; binary itself supervises those). logf, when not nil, is its
// stdout and stderr from its first instruction; else they are the null
// device. hold, when not nil, is given the supervisor's end of the
// hand-over socket before this process closes its copy (tests keep one
// open, as a fork of this process running meanwhile does until it execs).
func Start(binary string, postgres bool, logf *os.File, hold func(*os.File)) (*Proc, error) {
	conn, supConn, err := SocketPair()
	if err != nil {
		return nil, fmt.Errorf("start supervisor: %w", err)
	}
	defer supConn.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("start supervisor: %w", err)
	}
	defer statusW.Close()
	fail := func(err error) (*Proc, error) {
		conn.Close()
		statusR.Close()
		return nil, err
	}
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		return fail(fmt.Errorf("start supervisor: %w", err))
	}
	defer stdin.Close()
	if logf == nil {
		if logf, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
			return fail(fmt.Errorf("start supervisor: %w", err))
		}
		defer logf.Close()
	}
	// syscall.ForkExec rather than os.StartProcess or os/exec: os/exec's
	// imports are initialised among the binary's last packages (see
	// StartEarly), and os.StartProcess first checks, once per process,
	// that pidfds work, by starting and waiting for a child that exits at
	// once: a process start more before this one, on the path every `bgcmd
	// run` waits for. A supervisor is this process's own child, so its pid
	// names it until Wait.
	pid, path, err := forkExec(binary, postgres, &syscall.ProcAttr{
		Dir: "/", Env: Env(),
		// 3: the hand-over socket; 4: the report.
		Files: []uintptr{stdin.Fd(), logf.Fd(), logf.Fd(), supConn.Fd(), statusW.Fd()},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return fail(fmt.Errorf("start detached supervisor %s: %w (check that the bgcmd binary exists and is executable)", binary, err))
	}
	if hold != nil {
		hold(supConn)
	}
	return &Proc{PID: pid, Path: path, Conn: conn, Status: statusR}, nil
}

// SocketPair returns the two ends of a unix stream socket, close-on-exec.
// The first (the starting process's) is non-blocking, read and written
// through the runtime's poller: closing it ends a read that waits on it.
func SocketPair() (host, sup *os.File, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "handoff"), os.NewFile(uintptr(fds[1]), "handoff"), nil
}

// early is the supervisor StartEarly started, until it is taken.
var early struct {
	sync.Mutex
	p      *Proc
	binary string
}

// StartEarly starts a supervisor of the running executable ahead of need,
// for TakeEarly. It is for bgcmd's own main package, which calls it while
// the binary initialises when the command is `bgcmd run`: the supervisor
// then starts in parallel with the rest of the binary's initialisation. It
// holds no job and no environment until it is handed one, and exits when
// this process ends without handing it one. An error leaves nothing
// started; the runner then starts its supervisor as it would without.
// postgres says the run's store is likely a PostgreSQL one (a --db flag
// or $BGCMD_DB): see Start.
func StartEarly(postgres bool) {
	bin, err := os.Executable()
	if err != nil {
		return
	}
	p, err := Start(bin, postgres, nil, nil)
	if err != nil {
		return
	}
	early.Lock()
	defer early.Unlock()
	early.p, early.binary = p, bin
}

// TakeEarly returns the supervisor StartEarly started, once, when it runs
// binary and can open the store (postgres: a PostgreSQL one, which only
// binary itself can, not its supervisor binary); else nil (one that
// cannot is let go: the caller starts its own).
func TakeEarly(binary string, postgres bool) *Proc {
	early.Lock()
	defer early.Unlock()
	p := early.p
	early.p = nil
	if p != nil && (early.binary != binary || postgres && p.Path != binary) {
		p.Close()
		return nil
	}
	return p
}

// DiscardEarly lets the supervisor StartEarly started exit when nobody
// took it (a run that was refused or never got as far as its store).
func DiscardEarly() {
	early.Lock()
	defer early.Unlock()
	if early.p != nil {
		early.p.Close()
		early.p = nil
	}
}
