//go:build linux

package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// pipeSize is the capacity asked of each output pipe (F_SETPIPE_SZ): fewer
// wake-ups for a chatty child. The kernel may grant less.
const pipeSize = 1 << 20

// killPoll is how often a supervisor reads its job's row for a kill
// request: the truth under the wake socket (listenWake).
const killPoll = time.Second

// drainGrace bounds how long the pumps may keep reading after the main
// process and its group are gone: a descendant that left the group and kept
// the pipe open must not hold the job forever.
const drainGrace = 2 * time.Second

// supervisor owns one job's child process. The same loop serves the
// in-process and the detached mode.
type supervisor struct {
	// threadWaits has the output pipes and the wake socket waited on in
	// threads of their own, outside Go's poller: a detached supervisor's
	// (see threadReader).
	threadWaits bool

	store *jobstore.Store
	arts  *artifacts.Store
	job   *bgcmd.Job
	// precheck, when set, runs before the child is spawned; its error
	// settles the job start_failed instead (a queued job's queuedCheck).
	precheck func() error
	// hookRule is the on_settle hook of the policy the job started under
	// here: the only hook this supervisor runs (nil: none).
	hookRule *hookRule
	dir      string
	env      []string
	now      func() time.Time
	// cwd is the job's checked working directory, open: the child starts
	// in it, never in the path again. Its owner closes it once started
	// receives.
	cwd *os.File

	// started receives nil once the child runs or the job has settled as
	// start_failed, and an error when the job could not be prepared.
	started chan error
	// running is a copy of the job as its row reads once the child runs
	// (pid and start recorded), and startSettled says the job settled at
	// its start instead; both are written before started receives nil.
	running      *bgcmd.Job
	startSettled bool
	// kick is poked by an in-process Kill, so it need not wait for the
	// directory watch.
	kick chan struct{}
	// killPoll is how often the job's row is read for a kill request.
	killPoll time.Duration
	// killHost and killHostID name the host the delivered kill request
	// came from (recorded in the settle's event detail).
	killHost, killHostID string
	// livePublished and liveSizes are when publishLive last wrote and the
	// log sizes it wrote.
	livePublished time.Time
	liveSizes     [2]int64
	// done is closed once the job has settled (or settling failed).
	done chan struct{}
	// settled is the job's row as the settle wrote it, settledArts its
	// artifacts and settledCounters its session's counters as the settle
	// left them, all set before done is closed; nil when it did not settle.
	settled         *jobstore.Record
	settledArts     []bgcmd.Artifact
	settledCounters *bgcmd.Counters
	// containment is how the job's descendants are kept in the job; binary
	// is the executable re-executed as its reaper (containReaper), reapers
	// the runner's pool of them.
	containment Containment
	binary      string
	reapers     *reaperPool
	// workers run the job's goroutines (nil: new ones each time).
	workers *workers
	// procWake, when set, is the socket that tells the job to read its row
	// again (see watch); nil: the job binds a socket of its own.
	procWake *procWake
	// cgroupRoot is the policy's delegated cgroup ("" = none); inCgroup
	// says the job runs in its own cgroup below it, cgroupErr why not.
	cgroupRoot string
	inCgroup   bool
	cgroupErr  error
	// create, when set, writes the job's row once the child has started
	// (in process: the row is created with the child's pid and start
	// already in it, one write instead of two). Until it has succeeded the
	// job has no row; if it fails, the child is stopped at once and the
	// start fails with its error, nothing on record. Unset once the row
	// exists.
	create func() error
	// announceTo, with create, is the SQLite store whose row create
	// writes after the job is reported running: once the child runs, a
	// record of the row is announced beside the store (jobstore.Announce),
	// the job reported running, and only then is the row written. Every
	// reader of the store reads the record as the row meanwhile, and writes
	// it if this process ends first.
	announceTo string
	// createErr is why create failed: the job has no row.
	createErr error
	// hookless says no on_settle hook was stored with the job (create's, in
	// process; the host's, for a detached job without a row: its policy
	// has none), so its settle need not look for one (see afterSettle).
	hookless bool
	// hostRecords, when set, has the host write the job's row once the
	// child runs (a detached supervisor handed a job with no row yet,
	// spec.Unrecorded): it reports the child running, pid and start in the
	// report, and returns nil once the host says the row is written. Until
	// then no row names the child; any other answer stops it at once. A
	// child that did not start is left to the host to record (notStarted):
	// this supervisor writes nothing for a job without a row.
	hostRecords func() error
	// storeReady, when store is nil, waits for the store to be open and
	// sets it: a detached supervisor handed a job with no row opens it
	// while the child starts and the host records it (hostRecords), and
	// needs it only for the settle.
	storeReady func() error
	// beforeSettle, when set, runs before the settle's transaction: a
	// detached supervisor readying the store's log for the next process
	// (spec.ReadyLog) checkpoints then, so that the settle is the write
	// that starts the log again.
	beforeSettle func()
}

func (r *Runner) newSupervisor(job *bgcmd.Job, env []string) *supervisor {
	return &supervisor{
		store: r.store, arts: r.arts, job: job, dir: r.jobDir(job.ID), env: env, now: r.now, killPoll: r.killPoll,
		started: make(chan error, 1), kick: make(chan struct{}, 1), done: make(chan struct{}),
		containment: r.inProcessContainment(), binary: r.reaperBinary(), reapers: &r.reapers, cgroupRoot: r.cgroupRoot(),
		workers: r.workers, procWake: r.processWake(), hookRule: r.hookRule(),
	}
}

// outcome is how the main process ended and why.
type outcome struct {
	state    bgcmd.State
	exitCode *int
	signal   string
	err      string
	detail   map[string]any
	usage    *bgcmd.Usage
}

// run supervises the job from spawn to settle. It never panics on a user
// cause; every path ends in exactly one settle attempt.
func (s *supervisor) run() {
	defer close(s.done)
	ctx := context.Background()
	out, err := s.supervise(ctx)
	if err != nil {
		// The job could not even be prepared: settle it as start_failed so
		// nothing is left running, and tell the starter (who settles it
		// when there is no store here to do it). A row not written yet is
		// written first, so the attempt is on record; one that could not
		// be written leaves nothing to settle.
		if s.hostRecords == nil && s.store != nil && s.createRow() == nil {
			s.settle(ctx, &outcome{state: bgcmd.StateStartFailed, err: err.Error()}, nil)
		}
		s.started <- err
		return
	}
	s.settle(ctx, out.outcome, out.streams)
	if out.state == bgcmd.StateStartFailed {
		s.startSettled = true
		s.started <- nil
	}
}

// supervised is an outcome plus the captured streams.
type supervised struct {
	*outcome
	streams map[bgcmd.Stream]*artifacts.Capture
}

func (s *supervisor) supervise(ctx context.Context) (*supervised, error) {
	streams := map[bgcmd.Stream]*artifacts.Capture{}
	for _, st := range []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr} {
		c, err := artifacts.NewCapture(artifacts.CaptureOptions{
			Path: filepath.Join(s.dir, string(st)+".log"), Cap: s.job.MaxOutputBytes})
		if err != nil {
			closeCaptures(streams)
			return nil, fmt.Errorf("prepare %s log: %w", st, err)
		}
		streams[st] = c
	}
	res := &supervised{streams: streams}
	readers, writers, err := makePipes(s.threadWaits)
	if err != nil {
		closeCaptures(streams)
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: s.job.Exe, Args: s.job.Argv, Dir: s.job.Cwd, Env: s.env,
		Stdout: writers[0], Stderr: writers[1],
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	if s.cwd != nil {
		// The forked child follows this magic link to the very directory
		// the policy opened (its descriptors are still open at the chdir,
		// which comes before the exec). A relative argv[0] is looked up
		// from there too, not through the path again.
		cmd.Dir = "/proc/self/fd/" + strconv.Itoa(int(s.cwd.Fd()))
		if argv0 := s.job.Argv[0]; !filepath.IsAbs(argv0) && strings.ContainsRune(argv0, '/') {
			cmd.Path = argv0
		}
	}
	var p jobProc
	var startErr error
	if s.precheck != nil {
		startErr = s.precheck()
	}
	if startErr == nil {
		startErr = closeInheritedOnExec()
	}
	if startErr == nil {
		p, startErr = s.start(cmd)
	}
	writers[0].Close()
	writers[1].Close()
	if startErr != nil {
		readers[0].Close()
		readers[1].Close()
		closeCaptures(streams)
		if s.hostRecords != nil {
			return nil, notStarted{describeStartError(s.job, startErr)}
		}
		if err := s.createRow(); err != nil {
			return nil, err
		}
		// Reported by run once settled, so Start returns the settled job.
		res.outcome = &outcome{state: bgcmd.StateStartFailed, err: describeStartError(s.job, startErr)}
		return res, nil
	}
	pid := p.pid()
	startedAt := s.now().UTC().Round(0)
	pidStart := processStart(pid)
	s.job.PID, s.job.PGID, s.job.PIDStart, s.job.StartedAt = pid, pid, pidStart, &startedAt
	var marked error
	if s.hostRecords != nil {
		if err := s.hostRecords(); err != nil {
			err = stopUnrecorded(p, readers, streams, err)
			os.RemoveAll(s.dir) // a job never on record leaves nothing behind
			return nil, err
		}
		// On record: the store is needed from here on, for the settle.
		if s.store == nil {
			if err := s.storeReady(); err != nil {
				// The row names this supervisor and the child: once this
				// process has ended, reconcile settles the job.
				return nil, stopUnrecorded(p, readers, streams, err)
			}
		}
	} else if s.create != nil && s.announceTo != "" {
		a, err := jobstore.Announce(s.announceTo, s.job)
		if err != nil {
			return nil, stopUnrecorded(p, readers, streams, err)
		}
		s.reportStarted()
		if err := s.createRow(); err != nil {
			// Reported running, and on record only as announced: the
			// child is stopped, and the store's next reader writes the
			// row once this process has ended (its lock on the record
			// goes with it), for reconcile to settle as orphaned.
			return nil, stopUnrecorded(p, readers, streams, err)
		}
		a.Done()
	} else if s.create != nil {
		if err := s.createRow(); err != nil {
			return nil, stopUnrecorded(p, readers, streams, err)
		}
	} else {
		marked = s.store.MarkStarted(ctx, jobstore.StartedParams{ID: s.job.ID, PID: pid, PGID: pid,
			PIDStart: pidStart, StartedAt: startedAt})
	}
	p.recorded(marked == nil)
	switch {
	case marked != nil:
		signalJob(p, syscall.SIGKILL)
		s.started <- nil
	case s.running == nil: // not reported yet (an announced create is)
		s.reportStarted()
	}
	res.outcome = s.watch(ctx, p, readers, streams)
	return res, nil
}

// reportStarted tells the starter the child runs, with the job as it
// then reads (running).
func (s *supervisor) reportStarted() {
	running := *s.job
	if running.EnvNames == nil {
		running.EnvNames = []string{}
	}
	if running.Labels == nil {
		running.Labels = map[string]string{}
	}
	s.running = &running
	s.started <- nil
}

// notStarted is a child that could not be started, under a supervisor
// that leaves the job's record to its host (hostRecords): msg is the
// start_failed error for the row.
type notStarted struct{ msg string }

func (e notStarted) Error() string { return e.msg }

// stopUnrecorded stops a child whose start could not be recorded (err says
// why) and releases what its supervision held: a job no row names is
// nobody's to stop later, so it does not run on.
func stopUnrecorded(p jobProc, readers [2]outputReader, streams map[bgcmd.Stream]*artifacts.Capture, err error) error {
	signalJob(p, syscall.SIGKILL)
	p.recorded(false)
	p.wait()
	readers[0].Close()
	readers[1].Close()
	closeCaptures(streams)
	return fmt.Errorf("%w (the command was stopped at once: it cannot run unrecorded)", err)
}

// createRow writes the job's row when it is written only now (create is
// set), and forgets create once it exists. It is tried once: a failure
// stays the answer.
func (s *supervisor) createRow() error {
	if s.create == nil || s.createErr != nil {
		return s.createErr
	}
	if s.createErr = s.create(); s.createErr != nil {
		return s.createErr
	}
	s.create = nil
	return nil
}

// watch pumps output and waits for the main process, enforcing the cap, the
// timeout and kill requests; the job's wait kills and reaps every
// descendant left (or, under process-group containment, the group) before
// the pipes are drained. It collects what happened; classify decides the
// outcome.
func (s *supervisor) watch(ctx context.Context, p jobProc, readers [2]outputReader, streams map[bgcmd.Stream]*artifacts.Capture) *outcome {
	capHit := make(chan bgcmd.Stream, 2)
	writeFailed := make(chan error, 2)
	pumped := make(chan struct{}, 2)
	go pump(readers[0], streams[bgcmd.Stdout], bgcmd.Stdout, capHit, writeFailed, pumped)
	go pump(readers[1], streams[bgcmd.Stderr], bgcmd.Stderr, capHit, writeFailed, pumped)
	exited := make(chan procExit, 1)
	s.workers.goRun(func() { exited <- p.wait() })

	// A kill request made by another process, here or on a host that
	// shares the database's folder, is followed by a datagram on the
	// job's wake socket; the poll (one primary-key read) covers a wake
	// that does not come.
	var requests <-chan struct{}
	if s.procWake != nil {
		c, stop := s.procWake.listen(s.job.ID)
		defer stop()
		requests = c
	} else if wake, err := listenWake(wakeDirOf(s.store), s.job.ID, s.threadWaits); err == nil {
		defer wake.Close()
		requests = wake.C
	}
	notices, unwatch := s.watchKillNotices()
	defer unwatch()
	poll := time.NewTicker(cmp.Or(s.killPoll, killPoll))
	defer poll.Stop()
	timeout := time.NewTimer(s.job.Timeout)
	defer timeout.Stop()
	var grace <-chan time.Time
	var reason bgcmd.State
	var lostOutput error
	delivered := ""
	escalate := func() {
		if grace == nil {
			grace = time.After(s.job.KillGrace)
		}
	}
	var ended procExit
loop:
	for {
		select {
		case ended = <-exited:
			break loop
		case <-capHit:
			if reason == "" {
				reason = bgcmd.StateOutputLimit
			}
			signalJob(p, syscall.SIGKILL)
		case err := <-writeFailed:
			// The log cannot take more (a full disk, say): stop the command
			// rather than let it block on a full pipe or lose output quietly.
			// That is no kill request: classify says why it stopped.
			if lostOutput == nil {
				lostOutput = err
			}
			signalJob(p, syscall.SIGKILL)
		case <-timeout.C:
			if reason == "" {
				reason = bgcmd.StateTimeout
			}
			signalJob(p, syscall.SIGTERM)
			escalate()
		case <-grace:
			signalJob(p, syscall.SIGKILL)
		case <-s.kick:
			delivered = s.checkKill(ctx, p, delivered, &reason, escalate)
		case <-notices:
			delivered = s.checkKill(ctx, p, delivered, &reason, escalate)
		case _, ok := <-requests:
			if !ok {
				requests = nil
			}
			delivered = s.checkKill(ctx, p, delivered, &reason, escalate)
		case <-poll.C:
			delivered = s.checkKill(ctx, p, delivered, &reason, escalate)
			s.publishLive(ctx)
		}
	}
	// Every descendant is gone now (wait killed the holders of the pipes),
	// so the pumps drain every byte written to EOF; drainGrace bounds a
	// descendant that escaped process-group containment.
	drainPumps(readers, pumped)
	closeCaptures(streams)

	h := happened{stop: reason, lostOutput: lostOutput, ended: ended,
		capped: map[bgcmd.Stream]bool{}, written: map[bgcmd.Stream]int64{},
		containment: s.recordedContainment(), cgroupErr: s.cgroupErr,
		timeout: s.job.Timeout, killGrace: s.job.KillGrace, maxOutputBytes: s.job.MaxOutputBytes}
	if l := s.job.ResourceLimits; l != nil {
		h.memoryMax = l.MemoryMaxBytes
	}
	for st, c := range streams {
		h.capped[st], h.written[st] = c.Summary().Capped, c.Written()
	}
	out := classify(h)
	if out.state == bgcmd.StateKilled && s.killHostID != "" {
		out.detail["kill_host"] = s.killHost
		out.detail["kill_host_id"] = s.killHostID
	}
	return out
}

// checkKill reads the job's kill request and delivers a signal not yet
// delivered to the job (its group and main process), starting the grace
// period before SIGKILL.
func (s *supervisor) checkKill(ctx context.Context, p jobProc, delivered string, reason *bgcmd.State, escalate func()) string {
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), killRequestPrefix) {
			os.Remove(filepath.Join(s.dir, e.Name()))
		}
	}
	rec, err := s.store.Get(ctx, s.job.ID)
	if err != nil || rec.KillSignal == "" || rec.KillSignal == delivered {
		return delivered
	}
	sig, _, err := ParseSignal(rec.KillSignal)
	if err != nil {
		sig = syscall.SIGTERM
	}
	if *reason == "" {
		*reason = bgcmd.StateKilled
	}
	s.killHost, s.killHostID = rec.KillHost, rec.KillHostID
	signalJob(p, sig)
	if sig != syscall.SIGKILL {
		escalate()
	}
	return rec.KillSignal
}

// pump copies one pipe into its capture until EOF, the cap, a write error
// (reported on failed), or the read end is stopped. The capture reads the
// pipe itself, straight into the buffers it hashes.
func pump(r outputReader, c *artifacts.Capture, st bgcmd.Stream, capHit chan<- bgcmd.Stream, failed chan<- error, done chan<- struct{}) {
	defer func() { done <- struct{}{} }()
	_, err := c.ReadFrom(r)
	switch {
	case errors.Is(err, artifacts.ErrCapReached):
		capHit <- st
	case c.Err() != nil:
		failed <- fmt.Errorf("%s: %w", st, c.Err())
	}
	// A read error is the pipe stopped under the pump (drainPumps): the
	// end of the stream.
}

// drainPumps waits for both pumps, stopping their reads when a descendant
// that escaped the group keeps a pipe open past drainGrace, and closes the
// read ends once both have returned.
func drainPumps(readers [2]outputReader, pumped <-chan struct{}) {
	deadline := time.After(drainGrace)
	for n := 0; n < 2; {
		select {
		case <-pumped:
			n++
		case <-deadline:
			readers[0].stop()
			readers[1].stop()
			deadline = nil
		}
	}
	readers[0].Close()
	readers[1].Close()
}

// outputReader is the read end of an output pipe, as a pump reads it.
type outputReader interface {
	io.Reader
	// stop makes the Read under way, if any, and every later one return.
	stop()
	// Close closes the read end; call it once no Read runs.
	Close() error
}

// pollerReader is an output pipe read through Go's poller; stopping it
// closes it (which ends a Read waiting in the poller).
type pollerReader struct{ *os.File }

func (r pollerReader) stop() { r.File.Close() }

// makePipes makes the two output pipes: read outside Go's poller, each
// Read waiting on its own thread, when threadWaits is set (see
// threadReader), through the poller otherwise.
func makePipes(threadWaits bool) (readers [2]outputReader, writers [2]*os.File, err error) {
	for i := range 2 {
		r, w, perr := makePipe(threadWaits)
		if perr != nil {
			for j := 0; j < i; j++ {
				readers[j].Close()
				writers[j].Close()
			}
			return readers, writers, fmt.Errorf("create output pipe: %w", perr)
		}
		_, _ = unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, pipeSize)
		readers[i], writers[i] = r, w
	}
	return readers, writers, nil
}

func makePipe(threadWaits bool) (outputReader, *os.File, error) {
	// Only the read end is nonblocking: the writer, the child's stdout or
	// stderr, is never in this process's poller (a blocking descriptor
	// handed to a child costs no registration, nor a switch back to
	// blocking mode as the child gets it).
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, err
	}
	w := os.NewFile(uintptr(fds[1]), "|1")
	if !threadWaits {
		return pollerReader{os.NewFile(uintptr(fds[0]), "|0")}, w, nil
	}
	r, err := newThreadReader(fds[0], "output pipe")
	if err != nil {
		unix.Close(fds[0])
		w.Close()
		return nil, nil, err
	}
	return r, w, nil
}

func closeCaptures(streams map[bgcmd.Stream]*artifacts.Capture) {
	for _, c := range streams {
		_ = c.Close()
	}
}

// describeStartError explains why an allowed command could not start.
func describeStartError(job *bgcmd.Job, err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		if _, serr := os.Stat(job.Cwd); serr != nil {
			return fmt.Sprintf("cannot start %s: working directory %s is gone: %v", job.Exe, job.Cwd, err)
		}
		return fmt.Sprintf("cannot start %s: not installed (no such file): %v", job.Exe, err)
	case errors.Is(err, os.ErrPermission):
		return fmt.Sprintf("cannot start %s: not executable (permission denied): %v", job.Exe, err)
	}
	return fmt.Sprintf("cannot start %s: %v", job.Exe, err)
}
