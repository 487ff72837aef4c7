//go:build linux

package runner

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ReapCommand is the hidden first argument with which the runner's Binary
// is re-executed as a job's reaper in the in-process mode: a small process
// between the host and the job that is a child subreaper, so the host itself
// never adopts strangers' orphans. MaybeSupervise handles it.
const ReapCommand = "__reap"

// reaperReady is set once this program has called MaybeSupervise: only then
// can its own executable be re-executed as a reaper.
var reaperReady atomic.Bool

// reapSpec is what the host sends a reaper on descriptor 3. The job's
// environment travels only this way.
type reapSpec struct {
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	// Cgroup: descriptor 5 is the job's cgroup, to start the job in.
	Cgroup bool `json:"cgroup,omitempty"`
}

// reapReport is one line a reaper writes on descriptor 4: first the child's
// pid (or why it could not start), then, after everything is reaped, how
// the job ended.
type reapReport struct {
	PID        int    `json:"pid,omitempty"`
	StartError string `json:"start_error,omitempty"`
	Errno      int    `json:"errno,omitempty"`

	Done      bool   `json:"done,omitempty"`
	Status    uint32 `json:"status,omitempty"`
	Leftovers int    `json:"leftovers,omitempty"`
	UserNS    int64  `json:"user_ns,omitempty"`
	SystemNS  int64  `json:"system_ns,omitempty"`
	MaxRSSKiB int64  `json:"max_rss_kib,omitempty"`
}

// startReaped starts cmd's program under a reaper: binary re-executed with
// ReapCommand, in cmd's directory, with cmd's stdout and stderr as its own,
// stdin /dev/null and only bgcmd's own variables. The reaper starts the job
// in a new process group led by the job (so the host's group signals reach
// the job and not the reaper, which must outlive it to clean up).
func startReaped(cmd *exec.Cmd, binary string, cg *jobCgroup) (jobProc, error) {
	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	reportR, reportW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	rc := &exec.Cmd{
		Path: binary, Args: []string{binary, ReapCommand}, Env: supervisorEnv(),
		// Dir is applied before the descriptors are rearranged, so a
		// /proc/self/fd/N directory names this process's descriptor.
		Dir:    cmd.Dir,
		Stdout: cmd.Stdout, Stderr: cmd.Stderr,
		// fd 3: the spec; fd 4: the report.
		ExtraFiles:  []*os.File{specR, reportW},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if cg != nil {
		// fd 5: the job's cgroup, which the reaper starts the job in. The
		// reaper stays outside, so the cgroup's limits count only the job.
		rc.ExtraFiles = append(rc.ExtraFiles, cg.fd)
	}
	err = rc.Start()
	specR.Close()
	reportW.Close()
	if err != nil {
		specW.Close()
		reportR.Close()
		return nil, err // the directory is checked here, as for the job itself
	}
	env := cmd.Env
	if env == nil {
		env = []string{}
	}
	err = json.NewEncoder(specW).Encode(&reapSpec{Path: cmd.Path, Argv: cmd.Args, Env: env, Cgroup: cg != nil})
	specW.Close()
	p := &reapedProc{rc: rc, report: bufio.NewReader(reportR), reportF: reportR}
	var first reapReport
	if err == nil {
		_ = reportR.SetReadDeadline(time.Now().Add(startupTimeout))
		first, err = p.read()
		_ = reportR.SetReadDeadline(time.Time{})
	}
	switch {
	case err == nil && first.PID > 0:
		p.child = first.PID
		return p, nil
	case err == nil && first.StartError != "":
		err = &os.PathError{Op: "fork/exec", Path: cmd.Path, Err: syscall.Errno(first.Errno)}
		if first.Errno == 0 {
			err = errors.New(first.StartError)
		}
	case err == nil:
		err = errors.New("reaper sent no pid")
	}
	_ = syscall.Kill(rc.Process.Pid, syscall.SIGKILL)
	_ = rc.Wait()
	reportR.Close()
	return nil, fmt.Errorf("reaper %s: %w", binary, err)
}

// reapedProc is a job running under a reaper.
type reapedProc struct {
	rc      *exec.Cmd
	child   int
	report  *bufio.Reader
	reportF *os.File
}

func (p *reapedProc) read() (reapReport, error) {
	var r reapReport
	line, err := p.report.ReadBytes('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			return r, errors.New("reaper exited before reporting")
		}
		return r, err
	}
	return r, json.Unmarshal(line, &r)
}

func (p *reapedProc) pid() int { return p.child }

func (p *reapedProc) wait() procExit {
	defer p.reportF.Close()
	last, rerr := p.read() // written just before the reaper exits
	werr := p.rc.Wait()
	var out procExit
	if rerr != nil || !last.Done {
		// The reaper died early (killed from outside): what the host saw of
		// it is all there is; its group is the job's, so kill what is left.
		out.err = fmt.Errorf("reaper of pid %d ended without a report (%v, %v)", p.child, werr, rerr)
		out.leftovers = killLeftovers(p.child)
		if ru, ok := p.rc.ProcessState.SysUsage().(*syscall.Rusage); ok {
			out.usage.add(ru)
		}
		return out
	}
	ws := syscall.WaitStatus(last.Status)
	out.status = &ws
	out.leftovers = last.Leftovers
	out.usage = usageSum{utime: time.Duration(last.UserNS), stime: time.Duration(last.SystemNS),
		maxRSSKiB: last.MaxRSSKiB, ok: true}
	return out
}

// reap is the body of a reaper process (see ReapCommand). It returns the
// exit code when it cannot end by the job's own signal.
func reap() int {
	// Descriptors 3 and 4 came from the host without close-on-exec, and
	// the job must start with 0-2 only, whatever else reached this process.
	if err := closeInheritedOnExec(); err != nil {
		unix.CloseOnExec(3)
		unix.CloseOnExec(4)
	}
	reportF := os.NewFile(4, "report")
	enc := json.NewEncoder(reportF)
	fail := func(msg string, errno int) int {
		_ = enc.Encode(&reapReport{StartError: msg, Errno: errno})
		return 127
	}
	if err := becomeSubreaper(); err != nil {
		return fail("become a subreaper: "+err.Error(), 0)
	}
	var sp reapSpec
	specF := os.NewFile(3, "spec")
	err := json.NewDecoder(specF).Decode(&sp)
	specF.Close()
	if err != nil {
		return fail("read spec: "+err.Error(), 0)
	}
	// Caught, not ignored: an ignored disposition would pass to the job.
	relay := make(chan os.Signal, 8)
	signal.Notify(relay, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2)
	cmd := &exec.Cmd{Path: sp.Path, Args: sp.Argv, Env: sp.Env,
		Stdout: os.Stdout, Stderr: os.Stderr, SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	if sp.Cgroup {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, 5
	}
	if err := cmd.Start(); err != nil {
		var errno syscall.Errno
		errors.As(err, &errno)
		return fail(err.Error(), int(errno))
	}
	// The reaper keeps no copy of the job's pipes: they reach EOF when the
	// job's processes are gone.
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		_ = unix.Dup2(int(null.Fd()), 1)
		_ = unix.Dup2(int(null.Fd()), 2)
		null.Close()
	}
	child := cmd.Process.Pid
	zombies := startZombieReaper(child)
	_ = enc.Encode(&reapReport{PID: child})
	go func() {
		for sig := range relay {
			_ = syscall.Kill(-child, sig.(syscall.Signal))
		}
	}()
	_ = cmd.Wait()
	signal.Stop(relay)
	var u usageSum
	u.addSum(zombies.stop())
	var ws syscall.WaitStatus
	if ps := cmd.ProcessState; ps != nil {
		ws, _ = ps.Sys().(syscall.WaitStatus)
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			u.add(ru)
		}
	}
	n := reapTree(&u)
	_ = enc.Encode(&reapReport{Done: true, Status: uint32(ws), Leftovers: n,
		UserNS: int64(u.utime), SystemNS: int64(u.stime), MaxRSSKiB: u.maxRSSKiB})
	reportF.Close()
	return exitLike(ws)
}

// exitLike ends this process the way ws says the job ended: the same exit
// code, or death by the same signal where that signal kills (core dumps
// off), else 128 + the signal.
func exitLike(ws syscall.WaitStatus) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	sig := ws.Signal()
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	switch sig {
	case syscall.SIGTERM, syscall.SIGKILL, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1,
		syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGPIPE:
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second) // the signal is on its way; never reached for these signals
	}
	return 128 + int(sig)
}
