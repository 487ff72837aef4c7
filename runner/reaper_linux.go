//go:build linux

package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bgcmd/bgcmd/internal/launch"
	"golang.org/x/sys/unix"
)

// ReapCommand is the hidden first argument with which the runner's Binary
// is re-executed as a reaper in the in-process mode: a long-lived process
// between the host and its jobs that is a child subreaper, so the host
// itself never adopts strangers' orphans. MaybeSupervise handles it.
//
// A Runner keeps a small pool of reapers, started when a job first needs
// one and reused for the jobs after it; a reaper that dies is replaced at
// the next start, and Close stops them.
//
// Which orphan belongs to which job: a reaper serves one job at a time.
// Every process below it, whatever it did with sessions and process groups,
// is therefore a descendant of the job it serves (the previous job's were
// all killed and reaped before that job was reported done), so when the
// main process exits the reaper kills and reaps everything below itself,
// exactly as a per-job process did. A single reaper shared by concurrent
// jobs could not do this: a descendant that calls setsid and whose parent
// exits before anyone looks (setsid -f, a daemon's double fork) arrives as
// an orphan that names no job (its session, group and parent are all new),
// and only a cgroup would tell. Concurrent jobs thus get a reaper each, and
// the pool keeps up to maxIdleReapers of them for the next burst.
const ReapCommand = "__reap"

// reaperReady is set once this program has called MaybeSupervise: only then
// can its own executable be re-executed as a reaper.
var reaperReady atomic.Bool

// maxIdleReapers bounds the reapers a Runner keeps waiting for a job once
// a burst of concurrent jobs is over; the others are stopped.
const maxIdleReapers = 8

// reaperPool is a Runner's reaper processes.
type reaperPool struct {
	mu     sync.Mutex
	idle   []*reaperProc
	live   map[*reaperProc]struct{}
	closed bool
}

// reaperProc is one reaper process and the host's end of its socket.
type reaperProc struct {
	pool *reaperPool
	cmd  *exec.Cmd
	conn *net.UnixConn
	rd   *bufio.Reader
	// exited is closed once the host has waited for the process.
	exited chan struct{}
}

// get returns an idle reaper that is still alive, or starts one.
func (p *reaperPool) get(binary string) (*reaperProc, error) {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			return p.spawn(binary)
		}
		rp := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		select {
		case <-rp.exited:
			rp.conn.Close() // died while idle: replaced
		default:
			return rp, nil
		}
	}
}

// put takes back a reaper whose job is over: it waits for the next job,
// unless enough already wait or the runner is closed.
func (p *reaperPool) put(rp *reaperProc) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < maxIdleReapers {
		p.idle = append(p.idle, rp)
		rp = nil
	}
	p.mu.Unlock()
	if rp != nil {
		rp.stop()
	}
}

// discard ends a reaper that failed: killed, and waited by the host.
func (p *reaperPool) discard(rp *reaperProc) {
	if rp.cmd.Process != nil {
		_ = rp.cmd.Process.Kill()
	}
	rp.stop()
	<-rp.exited
}

// spawn starts a reaper process: binary re-executed with ReapCommand in
// its own process group, in "/", with stdin, stdout and stderr /dev/null
// (it holds no job's pipe while idle), only bgcmd's own variables, and its
// end of a fresh socket pair as descriptor 3.
func (p *reaperPool) spawn(binary string) (*reaperProc, error) {
	if binary == "" {
		return nil, errors.New("start reaper: no executable to re-execute (set Options.Binary)")
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("start reaper: socket pair: %w", err)
	}
	hostF := os.NewFile(uintptr(fds[0]), "reaper socket")
	reaperF := os.NewFile(uintptr(fds[1]), "reaper socket")
	defer reaperF.Close()
	c, err := net.FileConn(hostF)
	hostF.Close()
	if err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	conn := c.(*net.UnixConn)
	cmd := &exec.Cmd{
		Path: binary, Args: []string{binary, ReapCommand}, Env: launch.Env(), Dir: "/",
		ExtraFiles:  []*os.File{reaperF},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("start reaper %s: %w (check that the executable exists and calls runner.MaybeSupervise)", binary, err)
	}
	rp := &reaperProc{pool: p, cmd: cmd, conn: conn, rd: bufio.NewReader(conn), exited: make(chan struct{})}
	p.mu.Lock()
	if p.live == nil {
		p.live = map[*reaperProc]struct{}{}
	}
	p.live[rp] = struct{}{}
	p.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		p.mu.Lock()
		delete(p.live, rp)
		p.mu.Unlock()
		close(rp.exited)
	}()
	return rp, nil
}

// stop closes the host's end: the reaper, between jobs, exits.
func (rp *reaperProc) stop() { rp.conn.Close() }

// close stops every idle reaper, and every busy one as its job ends, and
// waits (until ctx is done) for those that are idle now to exit.
func (p *reaperPool) close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, rp := range idle {
		rp.stop()
	}
	for _, rp := range idle {
		select {
		case <-rp.exited:
		case <-ctx.Done():
			return fmt.Errorf("close runner: reaper %d still running: %w", rp.cmd.Process.Pid, ctx.Err())
		}
	}
	return nil
}

// read reads the reaper's next report.
func (rp *reaperProc) read() (reapReport, error) {
	var r reapReport
	line, err := rp.rd.ReadBytes('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			return r, errors.New("reaper exited before reporting")
		}
		return r, err
	}
	return r, json.Unmarshal(line, &r)
}

// start starts cmd's program under a reaper of the pool (binary
// re-executed, see ReapCommand): with cmd's path, argv and environment,
// cmd's stdout and stderr, stdin /dev/null (or cmd's, when it is a file),
// in the open directory cwd (or cmd.Dir when cwd is nil) and in cg when
// there is one. The job leads a
// new process group, so the host's group signals reach the job and not
// the reaper, which must outlive it to clean up.
func (p *reaperPool) start(binary string, cmd *exec.Cmd, cwd *os.File, cg *jobCgroup) (jobProc, error) {
	stdout, ok1 := cmd.Stdout.(*os.File)
	stderr, ok2 := cmd.Stderr.(*os.File)
	if !ok1 || !ok2 {
		return nil, errors.New("start under a reaper: stdout and stderr must be files")
	}
	env := cmd.Env
	if env == nil {
		env = []string{}
	}
	q := &reapRequest{Path: cmd.Path, Argv: cmd.Args, Env: env}
	fds := []int{int(stdout.Fd()), int(stderr.Fd())}
	if cwd != nil {
		q.HasDir = true
		fds = append(fds, int(cwd.Fd()))
	} else {
		q.Dir = cmd.Dir
	}
	if cg != nil {
		var attr syscall.SysProcAttr
		cg.place(&attr) // the job, and so every process of it
		q.HasCgroup = true
		fds = append(fds, attr.CgroupFD)
	}
	if stdin, ok := cmd.Stdin.(*os.File); ok && stdin != nil {
		q.HasStdin = true
		fds = append(fds, int(stdin.Fd()))
	}
	var rp *reaperProc
	for attempt := 0; ; attempt++ {
		var err error
		if rp, err = p.get(binary); err != nil {
			return nil, err
		}
		sent, err := sendRequest(rp.conn, q, fds)
		if err == nil {
			break
		}
		p.discard(rp)
		if sent || attempt > 0 {
			return nil, fmt.Errorf("reaper %s: hand the job over: %w", binary, err)
		}
		// It died between jobs and nothing reached it: try a fresh one.
	}
	_ = rp.conn.SetReadDeadline(time.Now().Add(startupTimeout))
	first, err := rp.read()
	_ = rp.conn.SetReadDeadline(time.Time{})
	switch {
	case err == nil && first.PID > 0:
		return &reapedProc{rp: rp, child: first.PID, pidfd: childPidfd(first.PID, rp.cmd.Process.Pid)}, nil
	case err == nil && first.StartError != "":
		p.put(rp) // the reaper is fine; the job could not start
		if first.Errno != 0 {
			return nil, &os.PathError{Op: "fork/exec", Path: cmd.Path, Err: syscall.Errno(first.Errno)}
		}
		return nil, fmt.Errorf("reaper %s: %s", binary, first.StartError)
	case err == nil:
		err = errors.New("reaper sent no pid")
	}
	p.discard(rp)
	return nil, fmt.Errorf("reaper %s: %w", binary, err)
}

// reapedProc is a job running under a reaper.
type reapedProc struct {
	rp    *reaperProc
	child int
	// answered: the reaper has been told whether the job is on record.
	answered bool
	// mu guards pidfd, the main process's (-1: none), which signal uses
	// and wait closes.
	mu    sync.Mutex
	pidfd int
}

// childPidfd opens a pidfd of pid, the reaper's child: -1 when pid is no
// longer a child of the process reaper once the pidfd holds it (the main
// process already ended and was reaped, and the pid may be another's).
func childPidfd(pid, reaper int) int {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1
	}
	if st, err := readProcStat(pid); err != nil || st.ppid != reaper {
		unix.Close(fd)
		return -1
	}
	return fd
}

// signal sends sig to the main process through its pidfd.
func (p *reapedProc) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pidfd >= 0 {
		_ = unix.PidfdSendSignal(p.pidfd, sig, nil, 0)
	}
}

// closePidfd releases the main process's pidfd once the job has ended.
func (p *reapedProc) closePidfd() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pidfd >= 0 {
		unix.Close(p.pidfd)
		p.pidfd = -1
	}
}

func (p *reapedProc) pid() int { return p.child }

// recorded answers the reaper's pid report; a reaper told the job is not
// on record kills it. A reaper that is gone is seen by wait.
func (p *reapedProc) recorded(ok bool) {
	if p.answered {
		return
	}
	p.answered = true
	b := ackUnrecorded
	if ok {
		b = ackRecorded
	}
	_, _ = p.rp.conn.Write([]byte{b})
}

// wait reads the reaper's last report of the job. If the reaper dies
// first (killed from outside), the job's processes are no longer below a
// subreaper bgcmd owns: the job's process group is killed at once (a
// delegated cgroup, if any, is killed by the caller), the job settles
// with the error saying so and no exit status, and the next job gets a
// new reaper.
func (p *reapedProc) wait() procExit {
	p.recorded(false) // a start nobody recorded ends here
	last, rerr := p.rp.read()
	p.closePidfd()
	var out procExit
	if rerr == nil && last.Done {
		p.rp.pool.put(p.rp)
		ws := syscall.WaitStatus(last.Status)
		out.status = &ws
		out.leftovers = last.Leftovers
		out.usage = usageSum{utime: time.Duration(last.UserNS), stime: time.Duration(last.SystemNS),
			maxRSSKiB: last.MaxRSSKiB, ok: true}
		return out
	}
	p.rp.pool.discard(p.rp)
	how := "it ended"
	if ps := p.rp.cmd.ProcessState; ps != nil {
		how = ps.String()
	}
	out.leftovers = killGroupAndWait(p.child)
	out.err = fmt.Errorf("the reaper process %d of pid %d ended (%s) before reporting how the job ended (%v): bgcmd killed the job's process group; the exit status is unknown",
		p.rp.cmd.Process.Pid, p.child, how, rerr)
	return out
}

// groupGoneWait bounds how long a job whose reaper died waits for its
// killed process group to be gone.
const groupGoneWait = 5 * time.Second

// killGroupAndWait kills what is left of the group pgid and waits
// (bounded) until no live member is left, so that a settled job's group
// is gone. It reports how many processes it killed.
func killGroupAndWait(pgid int) int {
	n := killLeftovers(pgid)
	deadline := time.Now().Add(groupGoneWait)
	for n > 0 && len(groupMembers(pgid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // a bounded pause while the kernel tears the processes down
	}
	return n
}
