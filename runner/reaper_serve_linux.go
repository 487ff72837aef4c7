//go:build linux

package runner

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// reaper is the state of a reaper process (see ReapCommand): it serves one
// job at a time, so every process below it belongs to the job it serves.
type reaper struct {
	sock int
	// subreaperErr is why this process could not become a subreaper; every
	// start is then refused with it.
	subreaperErr error
	devNull      *os.File

	// mu guards the job being served. The orphan reaper and the signal
	// relay take it, and the server holds it across the start, so no exited
	// main process is reaped by the wrong hand before its pid is known.
	mu sync.Mutex
	// busy: a job is being served, from its request to its last report.
	busy bool
	// main is the job's main process while it runs, else 0.
	main int
	// orphans is the usage of the job's orphans reaped while it ran.
	orphans usageSum
}

// reap is the body of a reaper process. It serves jobs until the host
// closes its end of the socket (or dies), and returns the exit code.
func reap() int {
	// The socket came from the host without close-on-exec, and a job must
	// start with 0-2 only, whatever else reached this process.
	if err := closeInheritedOnExec(); err != nil {
		unix.CloseOnExec(reaperSocketFD)
	}
	go warmStarts() // while the first job is on its way
	s := &reaper{sock: reaperSocketFD, subreaperErr: becomeSubreaper()}
	if f, err := os.OpenFile(os.DevNull, os.O_RDONLY, 0); err == nil {
		s.devNull = f // every job's stdin
	}
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	go s.reapOrphans(chld)
	// Relayed to the job; those the host was started with ignored stay
	// ignored (and so are for the jobs).
	relay := make(chan os.Signal, 8)
	catchSignals(relay, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2)
	go s.relaySignals(relay)
	for {
		q, fds, err := readRequest(s.sock)
		if errors.Is(err, io.EOF) {
			return 0 // the host is done with this reaper
		}
		if err != nil {
			_ = writeReport(s.sock, &reapReport{StartError: err.Error()})
			return 1
		}
		if err := s.serve(q, fds); err != nil {
			return 1 // the host is gone: nobody to report to
		}
	}
}

// serve starts one job, reports its pid, waits for its main process, kills
// and reaps every process left below this one and reports how the job
// ended. It returns an error only when a report could not be written.
func (s *reaper) serve(q *reapRequest, fds []int) error {
	s.mu.Lock()
	s.busy = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
	}()
	stdout := os.NewFile(uintptr(fds[0]), "stdout")
	stderr := os.NewFile(uintptr(fds[1]), "stderr")
	received := []*os.File{stdout, stderr}
	attr := &syscall.SysProcAttr{Setpgid: true}
	dir := q.Dir
	next := 2
	if q.HasDir {
		d := os.NewFile(uintptr(fds[next]), "cwd")
		received = append(received, d)
		// The forked child follows this magic link to the very directory
		// the host's policy opened: its descriptors are still open at the
		// chdir, which comes before the exec.
		dir = "/proc/self/fd/" + strconv.Itoa(fds[next])
		next++
	}
	if q.HasCgroup {
		received = append(received, os.NewFile(uintptr(fds[next]), "cgroup"))
		attr.UseCgroupFD = true
		attr.CgroupFD = fds[next]
		next++
	}
	stdin := s.devNull
	if q.HasStdin {
		stdin = os.NewFile(uintptr(fds[next]), "stdin")
		received = append(received, stdin)
	}
	closeReceived := func() {
		for _, f := range received {
			f.Close()
		}
	}
	if s.subreaperErr != nil {
		closeReceived()
		return writeReport(s.sock, &reapReport{StartError: "become a subreaper: " + s.subreaperErr.Error()})
	}
	cmd := &exec.Cmd{Path: q.Path, Args: q.Argv, Env: q.Env, Dir: dir,
		Stdout: stdout, Stderr: stderr, SysProcAttr: attr}
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	s.mu.Lock()
	err := startUnprivileged(cmd, true)
	if err == nil {
		s.main, s.orphans = cmd.Process.Pid, usageSum{}
	}
	s.mu.Unlock()
	// This process keeps no copy of the job's pipes: they reach EOF when
	// the job's processes are gone.
	closeReceived()
	if err != nil {
		var errno syscall.Errno
		errors.As(err, &errno)
		return writeReport(s.sock, &reapReport{StartError: err.Error(), Errno: int(errno)})
	}
	acked := make(chan struct{})
	if err := writeReport(s.sock, &reapReport{PID: cmd.Process.Pid}); err != nil {
		// The host is gone; the job still ends with this reaper.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill() // its main process may have left the group
		close(acked)
	} else {
		go func() {
			defer close(acked)
			if !readAck(s.sock) {
				// Not on record, or the host died before it could be:
				// nobody else knows this job to stop it.
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				_ = cmd.Process.Kill() // its main process may have left the group
			}
		}()
	}
	_ = cmd.Wait()
	s.mu.Lock()
	u := s.orphans
	s.main, s.orphans = 0, usageSum{}
	s.mu.Unlock()
	var ws syscall.WaitStatus
	if ps := cmd.ProcessState; ps != nil {
		ws, _ = ps.Sys().(syscall.WaitStatus)
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			u.add(ru)
		}
	}
	// Everything still below this process is the job's: it serves one job
	// at a time, and the previous one left nothing (this same loop).
	n := reapTree(&u)
	<-acked // the host answers the pid report before it reads this one
	return writeReport(s.sock, &reapReport{Done: true, Status: uint32(ws), Leftovers: n,
		UserNS: int64(u.utime), SystemNS: int64(u.stime), MaxRSSKiB: u.maxRSSKiB})
}

// reapOrphans reaps, while a job runs, the orphans that came back to this
// subreaper and exited, so a job that keeps daemonizing short-lived
// processes does not fill the process table with zombies until it ends. It
// waits only for specific pids, never the job's main process (os/exec
// waits for that one); any other child left when main has exited is reaped
// when the job ends.
func (s *reaper) reapOrphans(chld <-chan os.Signal) {
	for range chld {
		s.mu.Lock()
		for s.main != 0 {
			pid := exitedChild()
			if pid <= 0 || pid == s.main {
				break
			}
			var ws syscall.WaitStatus
			var ru syscall.Rusage
			wpid, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, &ru)
			if err != nil || wpid != pid {
				break
			}
			s.orphans.add(&ru)
		}
		s.mu.Unlock()
	}
}

// relaySignals passes a signal sent to this reaper on to the job's process
// group; between jobs such a signal ends the reaper.
func (s *reaper) relaySignals(relay <-chan os.Signal) {
	for sig := range relay {
		s.mu.Lock()
		if !s.busy {
			os.Exit(0) // the host sees the socket close and starts another
		}
		if s.main != 0 {
			_ = syscall.Kill(-s.main, sig.(syscall.Signal))
		}
		s.mu.Unlock()
	}
}
