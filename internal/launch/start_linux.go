//go:build linux

package launch

import (
	"sync"
	"syscall"
)

// Proc is a supervisor process just started, by its descriptors: it reads
// the store to open and then its job from Conn, and writes its report on
// the pipe whose read end is Status. Nobody has waited for it yet.
type Proc struct {
	// PID is the supervisor's process id; the starting process is its
	// parent, so the id names it until that process waits for it.
	PID int
	// Path is the file it was started from: bgcmd's supervisor binary
	// (SupervisorPath), or the binary Start was given.
	Path string
	// Conn is the starting process's end of the hand-over socket,
	// non-blocking and close-on-exec.
	Conn int
	// Status is the read end of the supervisor's report pipe,
	// non-blocking and close-on-exec.
	Status int
}

// Close lets a supervisor that was handed nothing exit: it reads the end
// of its hand-over socket.
func (p Proc) Close() {
	syscall.Close(p.Conn)
	syscall.Close(p.Status)
}

// Start starts binary as a detached supervisor, from its supervisor binary
// when it has one (SupervisorPath) and the supervisor will not open a
// PostgreSQL store (postgres: the supervisor binary has no PostgreSQL
// driver; binary itself supervises those). It runs in its own session, in
// the root directory, with Env for its environment and no descriptor but
// these: the null device for its input; logFD, when not negative, for its
// output and errors from its first instruction, else the null device; its
// end of the hand-over socket (3) and its report pipe (4). hold, when not
// nil, is given the supervisor's end of the hand-over socket before this
// process closes it (tests keep a copy open, as a fork of this process
// running meanwhile does until it execs).
func Start(binary string, postgres bool, logFD int, hold func(fd int)) (Proc, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return Proc{}, &Error{Op: "start supervisor: socketpair", Err: err}
	}
	conn, supConn := fds[0], fds[1]
	defer syscall.Close(supConn)
	var pipe [2]int
	if err := syscall.Pipe2(pipe[:], syscall.O_CLOEXEC); err != nil {
		syscall.Close(conn)
		return Proc{}, &Error{Op: "start supervisor: pipe", Err: err}
	}
	statusR, statusW := pipe[0], pipe[1]
	defer syscall.Close(statusW)
	fail := func(err error) (Proc, error) {
		syscall.Close(conn)
		syscall.Close(statusR)
		return Proc{}, err
	}
	// The host's ends are read and written through the Go runtime's
	// poller, with deadlines: non-blocking.
	for _, fd := range []int{conn, statusR} {
		if err := syscall.SetNonblock(fd, true); err != nil {
			return fail(&Error{Op: "start supervisor", Err: err})
		}
	}
	// One descriptor of the null device serves as its input and, without
	// a log, its output.
	null, err := syscall.Open("/dev/null", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fail(&Error{Op: "start supervisor: open /dev/null", Err: err})
	}
	defer syscall.Close(null)
	if logFD < 0 {
		logFD = null
	}
	// syscall.ForkExec rather than os.StartProcess or os/exec: this
	// package stays clear of os (see the package comment), and
	// os.StartProcess first checks, once per process, that pidfds work, by
	// starting and waiting for a child that exits at once: a process start
	// more before this one, on the path every `bgcmd run` waits for.
	pid, path, err := forkExec(binary, postgres, &syscall.ProcAttr{
		Dir: "/", Env: Env(),
		Files: []uintptr{uintptr(null), uintptr(logFD), uintptr(logFD), uintptr(supConn), uintptr(statusW)},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return fail(&Error{Op: "start detached supervisor " + binary, Err: err,
			Hint: "check that the bgcmd binary exists and is executable"})
	}
	if hold != nil {
		hold(supConn)
	}
	return Proc{PID: pid, Path: path, Conn: conn, Status: statusR}, nil
}

// forkExec starts binary as a supervisor with attr: from its supervisor
// binary when it has one (SupervisorPath), which is told this build's stamp
// and binary (see internal/spawn.HandBackIfStale); else, or when that
// cannot be started, or when the supervisor will open a PostgreSQL store
// (postgres), which the supervisor binary is built without
// (LeanTag), from binary itself.
func forkExec(binary string, postgres bool, attr *syscall.ProcAttr) (pid int, path string, err error) {
	if lean := SupervisorPath(binary); lean != "" && !postgres {
		pid, err := syscall.ForkExec(lean, []string{lean, Command, buildStamp, binary}, attr)
		if err == nil {
			return pid, lean, nil
		}
	}
	pid, err = syscall.ForkExec(binary, []string{binary, Command}, attr)
	return pid, binary, err
}

// early is the supervisor StartEarly started, until it is taken.
var early struct {
	sync.Mutex
	p      Proc
	binary string
	held   bool
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
	if postgres && Lean {
		return // a lean bgcmd hands a PostgreSQL store's run to bgcmd-full
	}
	bin, err := Executable()
	if err != nil {
		return
	}
	p, err := Start(bin, postgres, -1, nil)
	if err != nil {
		return
	}
	early.Lock()
	defer early.Unlock()
	if early.held {
		early.p.Close()
	}
	early.p, early.binary, early.held = p, bin, true
}

// TakeEarly returns the supervisor StartEarly started, once, when it runs
// binary and can open the store (postgres: a PostgreSQL one, which only
// binary itself can, not its supervisor binary); else false (one that
// cannot is let go: the caller starts its own).
func TakeEarly(binary string, postgres bool) (Proc, bool) {
	early.Lock()
	defer early.Unlock()
	p, held := early.p, early.held
	early.p, early.held = Proc{}, false
	if !held {
		return Proc{}, false
	}
	if early.binary != binary || postgres && p.Path != binary {
		p.Close()
		return Proc{}, false
	}
	return p, true
}

// DiscardEarly lets the supervisor StartEarly started exit when nobody
// took it (a run that was refused or never got as far as its store).
func DiscardEarly() {
	early.Lock()
	defer early.Unlock()
	if early.held {
		early.p.Close()
		early.p, early.held = Proc{}, false
	}
}
