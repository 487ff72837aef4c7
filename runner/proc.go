//go:build linux

package runner

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// procStat is what bgcmd reads from /proc/<pid>/stat.
type procStat struct {
	state byte
	ppid  int
	pgrp  int
	// session is the process's session id (field 6).
	session int
	// start is the process start time in clock ticks after boot (field 22).
	start int64
	// flags are the kernel's PF_* flags of the task (field 9).
	flags uint64
}

// pfExiting is the kernel's PF_EXITING task flag: the task is in exit.
const pfExiting = 0x4

// readProcStat reads /proc/<pid>/stat.
func readProcStat(pid int) (procStat, error) {
	return readStat("/proc/" + strconv.Itoa(pid) + "/stat")
}

// readStat reads a stat file of /proc (a process's or a thread's). The
// command name (field 2) may hold spaces and parentheses, so fields are
// counted after its last ')'.
func readStat(path string) (procStat, error) {
	var buf [2048]byte
	b, err := readSmallFile(path, buf[:])
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, fmt.Errorf("parse %s", path)
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); field N is f[N-3].
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("parse %s: %d fields", path, len(f))
	}
	ppid, err0 := strconv.Atoi(f[1])
	pgrp, err1 := strconv.Atoi(f[2])
	session, err3 := strconv.Atoi(f[3])
	flags, err4 := strconv.ParseUint(f[6], 10, 64)
	start, err2 := strconv.ParseInt(f[19], 10, 64)
	if err0 != nil || err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return procStat{}, fmt.Errorf("parse %s", path)
	}
	return procStat{state: f[0][0], ppid: ppid, pgrp: pgrp, session: session, start: start, flags: flags}, nil
}

// readSmallFile reads the file at path into buf in one read, as a
// process's stat is read many times in a sweep of /proc: open, read and
// close, where os.ReadFile also stats the file and reads again for the
// end. A file that fills buf is read again in full.
func readSmallFile(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	n, err := readIgnoringEINTR(fd, buf)
	unix.Close(fd)
	switch {
	case err != nil:
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	case n == len(buf):
		return os.ReadFile(path)
	}
	return buf[:n], nil
}

// readIgnoringEINTR is one read(2) of fd into buf, made again when a
// signal interrupted it.
func readIgnoringEINTR(fd int, buf []byte) (int, error) {
	for {
		n, err := unix.Read(fd, buf)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// stoppedState says whether a /proc state letter is a stopped process's:
// stopped by a signal (T) or by a tracer (t).
func stoppedState(state byte) bool { return state == 'T' || state == 't' }

// processStart returns pid's start time, or 0 when it cannot be read.
func processStart(pid int) int64 {
	st, err := readProcStat(pid)
	if err != nil {
		return 0
	}
	return st.start
}

// alive reports whether pid is a live (not zombie) process that started at
// start; a recycled pid with another start time is not the same process.
func alive(pid int, start int64) bool {
	_, ok := aliveStat(pid, start)
	return ok
}

// aliveStat is alive, with the stat it read of the process.
func aliveStat(pid int, start int64) (procStat, bool) {
	if pid <= 0 {
		return procStat{}, false
	}
	st, err := readProcStat(pid)
	if err != nil || !running(pid, st) {
		return st, false
	}
	return st, start == 0 || st.start == start
}

// running reports whether the process pid, whose stat reads st, still runs.
// A zombie (or dead) state is not enough to say it does not: /proc shows a
// process in its thread group leader's state, and a leader that ended its
// own thread alone (exit(2), not exit_group(2)) stays a zombie while the
// other threads run on; such a process can still fork, write and hold
// files, and a signal to its pid reaches it.
func running(pid int, st procStat) bool {
	if st.state != 'Z' && st.state != 'X' {
		return true
	}
	return otherThreads(pid)
}

// otherThreads reports whether the thread group pid has a thread besides
// its leader that still runs: not exiting (PF_EXITING), and with no SIGKILL
// pending (a kill of the whole process marks every thread so at once, and
// each then begins its exit). A process being killed, whose leader became a
// zombie before the other threads were torn down, does not run on.
func otherThreads(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	names, _ := entryNames(dir) // none once the process is gone
	leader := strconv.Itoa(pid)
	for _, n := range names {
		if n == leader {
			continue
		}
		st, err := readStat(dir + "/" + n + "/stat")
		if err != nil || st.state == 'Z' || st.state == 'X' || st.flags&pfExiting != 0 || killPending(dir+"/"+n+"/status") {
			continue
		}
		return true
	}
	return false
}

// killPending reports whether SIGKILL is pending for the thread whose
// status file is at path, to it alone or to its whole process.
func killPending(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return true // gone
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, mask, ok := strings.Cut(line, ":")
		if !ok || name != "SigPnd" && name != "ShdPnd" {
			continue
		}
		if m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64); err == nil && m&(1<<(syscall.SIGKILL-1)) != 0 {
			return true
		}
	}
	return false
}

// bootID identifies this boot of the machine; pids and start times are only
// comparable within one boot.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// killGroupInSession SIGKILLs the live members of group pgid that belong to
// session sid, and reports how many there were. It is how a group whose
// leader is gone is killed: a group id can be taken again once the group
// is empty, so only members in the job's own session (a detached
// supervisor's: it called setsid) are the job's.
func killGroupInSession(pgid, sid int) int {
	n := 0
	for _, pid := range groupMembers(pgid) {
		if signalIf(pid, syscall.SIGKILL, func(st procStat) bool { return st.pgrp == pgid && st.session == sid }) {
			n++
		}
	}
	return n
}

// signalIf sends sig to the process at pid when ok holds for its stat, and
// reports whether it did. The stat is read after the process's pidfd is
// open and the signal goes through that pidfd, so it reaches the very
// process the check passed: one that took the pid after a scan of /proc
// read it (its own parent reaped it, and the pid came round again) fails
// the check or is never signalled. Without pidfds (a kernel before 5.3)
// the check and the kill are apart.
func signalIf(pid int, sig syscall.Signal, ok func(procStat) bool) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if err != unix.ENOSYS {
			return false // gone
		}
		st, err := readProcStat(pid)
		return err == nil && ok(st) && syscall.Kill(pid, sig) == nil
	}
	defer unix.Close(fd)
	st, err := readProcStat(pid)
	if err != nil || !ok(st) {
		return false
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0) == nil
}

// groupMembers lists the live processes whose process group is pgid.
func groupMembers(pgid int) []int {
	if pgid <= 1 {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readProcStat(pid); err == nil && st.pgrp == pgid && running(pid, st) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// signalGroup sends sig to every process of the group; a group that is
// already gone is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("refuse to signal process group %d", pgid)
	}
	if err := syscall.Kill(-pgid, sig); err != nil && err != syscall.ESRCH {
		return fmt.Errorf("signal process group %d: %w", pgid, err)
	}
	return nil
}

// killLeftovers SIGKILLs whatever is left of the group and reports how many
// processes that was.
func killLeftovers(pgid int) int {
	if pgid <= 1 || syscall.Kill(-pgid, 0) == syscall.ESRCH {
		return 0 // the common case, without a scan of /proc
	}
	n := len(groupMembers(pgid))
	if n > 0 {
		_ = signalGroup(pgid, syscall.SIGKILL)
	}
	return n
}

// signalNames maps the signals a caller may name to their numbers.
var signalNames = map[string]syscall.Signal{
	"SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL, "SIGINT": syscall.SIGINT,
	"SIGHUP": syscall.SIGHUP, "SIGQUIT": syscall.SIGQUIT, "SIGUSR1": syscall.SIGUSR1,
	"SIGUSR2": syscall.SIGUSR2, "SIGABRT": syscall.SIGABRT, "SIGALRM": syscall.SIGALRM,
	"SIGPIPE": syscall.SIGPIPE, "SIGSEGV": syscall.SIGSEGV, "SIGBUS": syscall.SIGBUS,
	"SIGFPE": syscall.SIGFPE, "SIGILL": syscall.SIGILL, "SIGTRAP": syscall.SIGTRAP,
	"SIGXCPU": syscall.SIGXCPU, "SIGXFSZ": syscall.SIGXFSZ, "SIGSYS": syscall.SIGSYS,
	"SIGVTALRM": syscall.SIGVTALRM, "SIGPROF": syscall.SIGPROF,
}

// ParseSignal accepts "TERM", "SIGTERM", "sigterm" or a number and returns
// the signal with its canonical name. "" means SIGTERM.
func ParseSignal(s string) (syscall.Signal, string, error) {
	if s == "" {
		return syscall.SIGTERM, "SIGTERM", nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		name := SignalName(syscall.Signal(n))
		if _, ok := signalNames[name]; ok {
			return syscall.Signal(n), name, nil
		}
		return 0, "", fmt.Errorf("unknown signal %q: use a name such as SIGTERM, SIGINT or SIGKILL", s)
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	sig, ok := signalNames[name]
	if !ok {
		return 0, "", fmt.Errorf("unknown signal %q: use a name such as SIGTERM, SIGINT or SIGKILL", s)
	}
	return sig, name, nil
}

// SignalName returns the conventional name of sig, e.g. "SIGKILL".
func SignalName(sig syscall.Signal) string {
	for name, s := range signalNames {
		if s == sig {
			return name
		}
	}
	return "SIG" + strconv.Itoa(int(sig))
}

// warmStarts has the os package make, now, the check it makes once per
// process before its first process start: that pidfds work, which it
// tells by starting a child that exits at once and waiting for it. A
// supervisor or reaper calls it as it begins, while it waits for its
// first job, so that the job's start, which its host waits for, does not
// wait for that check too.
func warmStarts() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Release()
	}
}
