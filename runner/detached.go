//go:build linux

package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/launch"
	"github.com/bgcmd/bgcmd/internal/spawn"
)

// SuperviseCommand is the hidden first argument with which the bgcmd binary
// is re-executed as a detached supervisor.
const SuperviseCommand = launch.Command

// supervisorHello is the first line a detached supervisor writes on its
// report pipe, before anything else. A binary that does not call
// MaybeSupervise never writes it, which is how Start tells a host binary
// run by mistake from a supervisor that failed.
const supervisorHello = "bgcmd-supervisor v1"

// startupTimeout bounds how long Start waits for a detached supervisor to
// report that the child is running.
const startupTimeout = 30 * time.Second

// spec is what a host hands a detached supervisor over its spec pipe. The
// environment travels only this way: it is never written to disk.
type spec struct {
	Home   string   `json:"home"`
	DBPath string   `json:"db_path"`
	JobID  string   `json:"job_id"`
	Env    []string `json:"env"`
	// HostPID and HostStart name the process the job's row names as its
	// supervisor: the host that queued it, from which the supervisor
	// claims it (a reconciler that took the job over meanwhile wins and
	// the supervisor starts nothing); with Unrecorded, the supervisor
	// itself.
	HostPID   int   `json:"host_pid"`
	HostStart int64 `json:"host_start"`
	// Cgroup is the policy's delegated cgroup v2 directory ("" = none).
	Cgroup string `json:"cgroup,omitempty"`
	// Job is the job to start, sent with Unrecorded: its row is written
	// once the child runs. Without it (a job that waited in the queue) the
	// supervisor claims the job from HostPID and reads it from its row.
	Job *specJob `json:"job,omitempty"`
	// Unrecorded says Job has no row yet: the host writes it once the
	// supervisor reports the child running, with the child's pid and
	// start in it, and answers on the hand-over socket (ackRecorded). A
	// supervisor that reads any other answer stops the child; one that
	// reads the socket's end (the host died) stops it unless the row,
	// read then, names it running: the host died after its write. A
	// child that could not be started is reported ("start_failed: …")
	// for the host to record.
	Unrecorded bool `json:"unrecorded,omitempty"`
	// Return, with Unrecorded, asks the supervisor back once the job has
	// settled: the host keeps the hand-over socket open, and the
	// supervisor says spareAgain on it when it is free for another job
	// (see Supervise).
	Return bool `json:"return,omitempty"`
	// Hookless, with Unrecorded, says the host's policy has no on_settle
	// hook, so the row it writes comes with none: the supervisor's settle
	// looks for no hook to run. A host that omits it (false) leaves the
	// supervisor to look, as before.
	Hookless bool `json:"hookless,omitempty"`
	// Checked, for a queued job, is the job as the host's policy checked
	// it when it was queued, and PolicyFile the file that policy came
	// from: the supervisor that holds the job starts it only as checked,
	// and only if the policy there allows it still (queuedCheck).
	Checked    *specJob `json:"checked,omitempty"`
	PolicyFile string   `json:"policy_file,omitempty"`
	// EnvChecked, for a queued job, names the variables of Env that the
	// host's policy checked (those the caller set, not inherited): the
	// holder checks them again at the job's start.
	EnvChecked []string `json:"env_checked,omitempty"`
	// Hook is the on_settle hook of the host's policy: the only hook the
	// supervisor runs, for its job or for those of Hooks (nil: none).
	Hook *hookRule `json:"hook,omitempty"`
	// Hooks, instead of a job, are the jobs whose on_settle hooks the
	// supervisor is to run: jobs the host settled, whose hooks it hands
	// off rather than wait for (see Runner.handsOffHooks). The supervisor
	// reports "ok" at once, runs each hook nobody has claimed, sweeps what
	// they left running and exits.
	Hooks []string `json:"hooks,omitempty"`
	// ReadyLog says the host ends once the job is on record and waits for
	// none of it (Options.Transient): the supervisor readies the store's
	// write-ahead log for the next process before its settle, and ends
	// with the store open (see detachedSupervisor.closeStore).
	ReadyLog bool `json:"ready_log,omitempty"`
	// SupervisorWrites says Job has no row and the supervisor writes it:
	// once the child runs it announces the create, the child's pid and
	// start in it (jobstore.Announce), reports the child running, and
	// then opens the store and writes the row; a start that failed is
	// written as start_failed first, and reported as a bare "ok". Its
	// host may never have opened the store (Options.SupervisorWrites).
	SupervisorWrites bool `json:"supervisor_writes,omitempty"`
}

// specJob is a job as it travels in the spec: the fields the row keeps
// but a status does not show travel beside it.
type specJob struct {
	bgcmd.Job
	TimeoutNS       int64  `json:"timeout_ns"`
	KillGraceNS     int64  `json:"kill_grace_ns"`
	SupervisorStart int64  `json:"supervisor_start"`
	BootID          string `json:"boot_id"`
}

func newSpecJob(j *bgcmd.Job) *specJob {
	return &specJob{Job: *j, TimeoutNS: int64(j.Timeout), KillGraceNS: int64(j.KillGrace),
		SupervisorStart: j.SupervisorStart, BootID: j.BootID}
}

func (sj *specJob) job() *bgcmd.Job {
	j := sj.Job
	j.Timeout, j.KillGrace = time.Duration(sj.TimeoutNS), time.Duration(sj.KillGraceNS)
	j.SupervisorStart, j.BootID = sj.SupervisorStart, sj.BootID
	return &j
}

// launchDetached starts a supervisor process for job (or hands the job to
// the spare) and waits until it reports the child running (or the job
// settled as start_failed). The open working directory cwd travels with
// the job: the child starts in it. If the supervisor cannot be launched or
// dies first, the job is settled as start_failed and an error is returned.
func (r *Runner) launchDetached(ctx context.Context, job *bgcmd.Job, env, envChecked []string, cwd *os.File) error {
	p, logf, err := r.prepareSupervisor(job.ID)
	if err != nil {
		return r.failDetached(ctx, job, err)
	}
	return r.handOver(ctx, job, p, logf, env, envChecked, cwd)
}

// prepareSupervisor makes ready the supervisor of job id before its row
// exists, so that the process starts and opens the store while the row is
// written: the spare when there is one, else a new supervisor whose output
// goes to the job's supervisor.log from its first instruction (a crash
// before the hand-over is explained there). Closing the returned socket
// instead of handing a job over lets the supervisor exit.
func (r *Runner) prepareSupervisor(id string) (*supProc, *os.File, error) {
	logf, err := os.OpenFile(filepath.Join(r.jobDir(id), supervisorLogName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("start supervisor: %w", err)
	}
	if p := r.takeSpare(); p != nil {
		return p, logf, nil
	}
	p, err := r.spawnSupervisorForJob(logf)
	if err != nil {
		logf.Close()
		return nil, nil, err
	}
	return p, logf, nil
}

// handOver gives a job whose row exists (one that waited in the queue) to
// the prepared supervisor p, which claims it from the row's supervisor (a
// spare that died waiting is replaced by a new supervisor), and waits for
// its report. It closes logf.
func (r *Runner) handOver(ctx context.Context, job *bgcmd.Job, p *supProc, logf *os.File, env, envChecked []string, cwd *os.File) error {
	defer logf.Close()
	sp := spec{Home: r.home, DBPath: r.store.Path(), JobID: job.ID, Env: env,
		HostPID: job.SupervisorPID, HostStart: job.SupervisorStart, Cgroup: r.cgroupRoot(), ReadyLog: r.transient,
		Checked: newSpecJob(job), EnvChecked: envChecked, Hook: r.hookRule()}
	if r.policy != nil {
		sp.PolicyFile = r.policy.File
	}
	p, rr, err := r.sendSpec(p, logf, cwd, func(*supProc) *spec { return &sp }, nil)
	if p == nil {
		return r.failDetached(ctx, job, err)
	}
	p.conn.Close()
	// Read the report even when the hand-over failed: a binary that is no
	// supervisor exits at once, and its missing hello says why.
	_, err = r.awaitStartup(ctx, job, rr, err, nil, func(err error) error { return r.failDetached(ctx, job, err) })
	// The next spare starts once this job runs, not while it is starting.
	r.refillSpare()
	return err
}

// sendSpec sends the spec specFor gives for the prepared supervisor p, with
// the job's directory cwd and log logf, and returns the reader of p's
// report. A spare that died waiting is replaced by a new supervisor, sent
// its own spec the same way. The
// write alone does not always say a spare died: a fork of this process
// running meanwhile holds a copy of the spare's socket until it execs, and
// the line lands in its buffer. A spare that ended without saying it took
// the job never did anything with it. meanwhile, when not nil, runs once
// the spec is sent, before that answer is awaited: a spare that is still
// starting (the one a `bgcmd run` starts as it begins) takes a few
// milliseconds to answer, work this process would otherwise do after. It
// returns the supervisor the job went to, or nil and why when a
// replacement could not be started; err is the error of the hand-over, if
// any.
func (r *Runner) sendSpec(p *supProc, logf, cwd *os.File, specFor func(*supProc) *spec, meanwhile func()) (*supProc, *reportReader, error) {
	send := func(p *supProc) (*reportReader, error) {
		if p.status != nil {
			return newReportReader(p.status, p.exe), sendLine(p.conn, specFor(p), cwd, logf)
		}
		statusR, statusW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		p.status = statusR
		defer statusW.Close() // the supervisor holds the only other copy
		return newReportReader(statusR, p.exe), sendLine(p.conn, specFor(p), cwd, logf, statusW)
	}
	rr, err := send(p)
	if meanwhile != nil {
		meanwhile()
	}
	if p.spare && (err != nil || !rr.tookJob()) {
		p.close()
		if p, err = r.spawnSupervisorForJob(logf); err != nil {
			return nil, nil, err
		}
		rr, err = send(p)
	}
	if err != nil {
		err = fmt.Errorf("hand job to supervisor: %w", err)
	}
	return p, rr, err
}

// startDetached hands job, whose row is not written yet, to the prepared
// supervisor p (a spare that died waiting is replaced by a new supervisor):
// the supervisor starts the child at once and reports its pid and start,
// and only then is the row written, with them in it, and the supervisor
// told so (ackRecorded) before it watches the job. The start thus costs
// one write, the host's, and the supervisor writes nothing before the
// job ends. A supervisor that hears otherwise stops the child: no row names
// it; one that sees this process end first stops it unless the row, read
// then, names it running. A start that failed is on
// record as start_failed all the same (failUnrecorded). It closes logf.
func (r *Runner) startDetached(ctx context.Context, job *bgcmd.Job, p *supProc, logf *os.File, env []string, cwd *os.File) (*bgcmd.Job, error) {
	defer logf.Close()
	job.CreatedAt = r.now().UTC() // the start began now, before the child's
	// Ask the supervisor back once the job has settled, when there is room.
	back := r.reserveReturn()
	// The job names the supervisor that takes it.
	specFor := func(p *supProc) *spec {
		job.SupervisorPID, job.SupervisorStart = p.pid, p.start
		return &spec{Home: r.home, DBPath: r.store.Path(), JobID: job.ID, Env: env,
			HostPID: p.pid, HostStart: p.start, Cgroup: r.cgroupRoot(), Job: newSpecJob(job), Unrecorded: true,
			Return: back, Hookless: !r.storesSettleHooks(), ReadyLog: r.transient && !back, Hook: r.hookRule()}
	}
	if r.supervisorWrites && !back && !r.storesSettleHooks() {
		return r.startWrittenBySupervisor(ctx, job, p, logf, cwd, func(p *supProc) *spec {
			sp := specFor(p)
			sp.Unrecorded, sp.SupervisorWrites = false, true
			return sp
		})
	}
	// The create's statements compile while the supervisor takes the job.
	prepare := func() { _ = r.store.Prepare(ctx, jobstore.BeginCreateWrites) } // a failure is the create's to report
	p, rr, err := r.sendSpec(p, logf, cwd, specFor, prepare)
	if p == nil {
		r.releaseReturn(back, nil)
		return r.readBack(ctx, job.ID, r.failUnrecorded(ctx, job, err))
	}
	returning := false
	defer func() {
		if !returning {
			p.conn.Close()
			r.releaseReturn(back, nil)
		}
	}()
	pending, ended := r.beginCreate(ctx, job)
	release := pending.Abort // nil when none was begun: then it does nothing
	defer func() {
		release() // any way out before the commit: nothing is on record
		ended()
	}()
	hold := time.AfterFunc(cmp.Or(r.pendingHold, pendingHold), release)
	started, err := r.awaitStartup(ctx, job, rr, err, release, func(err error) error { return r.failUnrecorded(ctx, job, err) })
	hold.Stop()
	// The next spare starts once this job runs, not while it is starting.
	r.refillSpare()
	var nf notStarted
	if errors.As(err, &nf) {
		if err := r.recordNotStarted(ctx, job, nf.msg); err != nil {
			return nil, fmt.Errorf("start: %w", err)
		}
		return r.readBack(ctx, job.ID, nil) // start_failed, as Start returns it
	}
	if err == nil && started == nil {
		// The supervisor of a job without a row reports it running, with
		// its pid, or says why not: anything else is not bgcmd's.
		err = r.failUnrecorded(ctx, job, fmt.Errorf("detached supervisor %s reported no pid", p.exe))
	}
	if err != nil {
		// On record as start_failed: nothing of it may run on, whatever
		// the supervisor started before it fell silent.
		endSupervisorTree(p.pid, p.start)
		return r.readBack(ctx, job.ID, err)
	}
	running := started.job(job, p)
	err = r.commitCreate(ctx, pending, running)
	ended()
	if err != nil {
		_, _ = p.conn.Write([]byte{ackUnrecorded})
		os.RemoveAll(r.jobDir(job.ID))
		return nil, fmt.Errorf("start: %w (the command was stopped at once: it cannot run unrecorded)", err)
	}
	// A supervisor that died since is named by the row with its child:
	// reconcile settles the job as for any supervisor that died.
	if _, err := p.conn.Write([]byte{ackRecorded}); err == nil && back {
		returning = true
		r.releaseReturn(back, p)
	}
	return running, nil
}

// beginCreate writes job's row ahead while the supervisor starts the
// child, in a transaction left open (jobstore.PendingCreate): once the
// child runs, recording it and the commit are all that is left of the
// start's one durable write. The transaction holds the store's write lock
// (so it is let go after pendingHold, a supervisor slow to start the
// child) and this process's writer: one start of a runner at a time holds
// one, so that starts made at once do not wait for each other's children.
// Any other start only readies the create's statements, as the first
// does, and writes the row whole once the child runs, as it does too when
// the write could not begin (the create then says why). It returns nil
// then. ended, called once the pending create is committed or dropped
// (more calls do nothing), lets the runner's next start hold one.
func (r *Runner) beginCreate(ctx context.Context, job *bgcmd.Job) (pending *jobstore.PendingCreate, ended func()) {
	if r.pendingCreate.CompareAndSwap(false, true) {
		ended = sync.OnceFunc(func() { r.pendingCreate.Store(false) })
		begun, err := r.store.BeginCreate(ctx, job)
		if err == nil {
			return begun, ended
		}
		ended()
	}
	_ = r.store.Prepare(ctx, jobstore.CreateWrites) // a failure is the create's to report
	return nil, func() {}
}

// pendingHold bounds how long a detached start holds the store's write
// lock for the row it wrote ahead while the supervisor starts the child:
// a few milliseconds as a rule, and every other writer of the store waits.
const pendingHold = 100 * time.Millisecond

// commitCreate makes job's row, with its child started, durable: the
// commit of the create begun ahead, or, when there is none or it was let
// go (pendingHold), the whole create. Then what follows a create
// (afterCreate).
func (r *Runner) commitCreate(ctx context.Context, pending *jobstore.PendingCreate, job *bgcmd.Job) error {
	if pending == nil {
		_, err := r.createJob(ctx, job)
		return err
	}
	err := pending.Commit(ctx, jobstore.StartedParams{ID: job.ID, PID: job.PID, PGID: job.PGID,
		PIDStart: job.PIDStart, StartedAt: *job.StartedAt})
	if errors.Is(err, jobstore.ErrCreateDropped) {
		_, err = r.createJob(ctx, job)
		return err
	}
	if err != nil {
		return err
	}
	_, err = r.afterCreate(ctx, job)
	return err
}

// failUnrecorded records a detached start that failed before its row was
// written: the row, then its settle as start_failed with err, which it
// returns. The attempt is on record as for a start that failed later.
func (r *Runner) failUnrecorded(ctx context.Context, job *bgcmd.Job, err error) error {
	if rerr := r.recordNotStarted(ctx, job, err.Error()); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// recordNotStarted writes the row of a detached job that did not start
// and settles it as start_failed with msg. It fails only when the row
// could not be written (then nothing is on record, and the job's
// directory is removed).
func (r *Runner) recordNotStarted(ctx context.Context, job *bgcmd.Job, msg string) error {
	if _, err := r.createJob(context.WithoutCancel(ctx), job); err != nil {
		os.RemoveAll(r.jobDir(job.ID))
		return err
	}
	_ = r.failDetached(ctx, job, errors.New(msg))
	return nil
}

// startedReport is a supervisor's report once the child runs: what it
// recorded in the row then.
type startedReport struct {
	PID       int       `json:"pid"`
	PIDStart  int64     `json:"pid_start"`
	StartedAt time.Time `json:"started_at"`
}

// runningReport is the report line of a supervisor whose child runs as j
// says: "ok" and the startedReport.
func runningReport(j *bgcmd.Job) string {
	b, err := json.Marshal(startedReport{PID: j.PID, PIDStart: j.PIDStart, StartedAt: *j.StartedAt})
	if err != nil {
		return "ok"
	}
	return "ok " + string(b)
}

// job is created as its row reads once supervisor p wrote the report (the
// same copy the in-process mode returns).
func (sr *startedReport) job(created *bgcmd.Job, p *supProc) *bgcmd.Job {
	j := *created
	j.SupervisorPID, j.SupervisorStart = p.pid, p.start
	at := sr.StartedAt.UTC()
	j.PID, j.PGID, j.PIDStart, j.StartedAt = sr.PID, sr.PID, sr.PIDStart, &at
	if j.EnvNames == nil {
		j.EnvNames = []string{}
	}
	if j.Labels == nil {
		j.Labels = map[string]string{}
	}
	return &j
}

// failDetached settles a job whose detached supervisor could not take it
// as start_failed (unless someone settled it already) and returns err.
func (r *Runner) failDetached(ctx context.Context, job *bgcmd.Job, err error) error {
	var serr error
	if job.State == bgcmd.StateQueued {
		_, serr = r.store.SettleQueued(context.WithoutCancel(ctx), job.ID, bgcmd.StateStartFailed, err.Error(), nil)
	}
	if job.State != bgcmd.StateQueued || errors.Is(serr, bgcmd.ErrInvalidTransition) {
		_, serr = r.store.Settle(context.WithoutCancel(ctx), jobstore.SettleParams{ID: job.ID,
			To: bgcmd.StateStartFailed, Error: err.Error()})
	}
	if serr == nil {
		os.RemoveAll(r.jobDir(job.ID))
		r.afterSettle(job.ID)
	}
	return err
}

// supProc is a started supervisor process waiting for its job: the host's
// end of the hand-over socket (the store to open already sent) and the
// read end of its report pipe.
type supProc struct {
	pid int
	// exe is the file it was started from (spawn.Proc.Path): the runner's
	// binary, or bgcmd-supervisor beside it.
	exe string
	// start is the process's start time (processStart): with pid, what a
	// job row names as its supervisor.
	start int64
	// status is the read end of its report pipe; nil once it served a
	// job and came back: the next job's pipe travels with its spec.
	conn, status *os.File
	spare        bool // started ahead of need: it may have died waiting
	om           openMsg
	// exited is closed once the process has ended and been reaped.
	exited <-chan struct{}
}

// spawnSupervisorForJob starts r's binary as a detached supervisor of r's
// store, as spawnSupervisor does, for the job in hand: the job follows at
// once (openMsg.JobFollows). A spare is spawned without the flag.
func (r *Runner) spawnSupervisorForJob(logf *os.File) (*supProc, error) {
	om := r.openMsg()
	om.JobFollows = true
	return spawnSupervisor(r.binary, om, logf)
}

// openMsg is the first line of the hand-over for the runner's store.
func (r *Runner) openMsg() openMsg {
	return openMsg{DBPath: r.store.Path(), DB: r.store.DSN(),
		Host: r.store.Host(), HostID: r.store.HostID(), ShareArtifacts: r.store.SharesArtifacts()}
}

// spawnSupervisor starts the binary as a detached supervisor (spawn.Start)
// and sends it the store to open. logf, when not nil, is its stdout and
// stderr from the start.
func spawnSupervisor(binary string, om openMsg, logf *os.File) (*supProc, error) {
	var hold func(int)
	if h := heldPeers.Load(); h != nil {
		hold = *h
	}
	sp, err := spawn.Start(binary, om.DB != "", logf, hold)
	if err != nil {
		return nil, err
	}
	return adoptSupervisor(sp, om), nil
}

// adoptSupervisor makes the just started supervisor sp this host's: it is
// reaped if it ends while this host lives, and sent the store to open.
func adoptSupervisor(sp *spawn.Proc, om openMsg) *supProc {
	pid := sp.PID
	exited := make(chan struct{})
	go func() { // reap it if it ends while this host lives
		_, ru, err := sp.Wait()
		if f := supervisorExited.Load(); f != nil && err == nil {
			(*f)(pid, ru)
		}
		close(exited)
	}()
	// A supervisor that died at once fails the next write, or leaves its
	// report pipe at end of file: the job's hand-over says which.
	_ = sendLine(sp.Conn, &om)
	return &supProc{pid: pid, exe: sp.Path, start: processStart(pid), conn: sp.Conn, status: sp.Status, om: om,
		exited: exited}
}

// heldPeers, when set (by tests), is given each new supervisor's end of
// its hand-over socket before this process closes it, to keep a copy open
// as a fork of this process running at the same time does until it execs.
var heldPeers atomic.Pointer[func(int)]

// supervisorExited, when set (by tests and benchmarks), is given each
// supervisor this host reaped with its rusage, which holds the
// supervisor's CPU time with that of the children it reaped (its
// ru_maxrss is no use: after vfork and exec it holds this host's RSS).
var supervisorExited atomic.Pointer[func(pid int, ru *syscall.Rusage)]

// close releases a supervisor that never got a job: it reads the end of
// the hand-over and exits.
func (p *supProc) close() {
	p.conn.Close()
	p.status.Close()
}

// awaitStartup reads the supervisor's report from rr: "ok" once the child
// runs or the job has settled, "error: …" when it could not prepare the
// job. A binary that ends or stays silent without the hello does not call
// MaybeSupervise: the error says so. handErr is the error of handing the
// spec over, if any. Unless the report is the child's start, release (if
// any) is called before the store is used: it lets go of a write begun
// ahead (see startDetached).
func (r *Runner) awaitStartup(ctx context.Context, job *bgcmd.Job, rr *reportReader, handErr error, release func(), fail func(error) error) (*startedReport, error) {
	defer rr.f.Close()
	line, err := rr.report()
	if strings.HasPrefix(line, "ok {") && handErr == nil {
		var sr startedReport
		if json.Unmarshal([]byte(strings.TrimPrefix(line, "ok ")), &sr) == nil && sr.PID > 0 {
			return &sr, nil
		}
	}
	if release != nil {
		release()
	}
	switch {
	case line == "ok" && handErr == nil:
		return nil, nil
	case strings.HasPrefix(line, "ok {") && handErr == nil:
		return nil, nil // the row has it: Start reads it back
	case strings.HasPrefix(line, "start_failed: ") && handErr == nil:
		// The child could not be started (a job without a row yet): on
		// record as start_failed, which is the start's result, not an
		// error of bgcmd's.
		return nil, notStarted{relayable(strings.TrimPrefix(line, "start_failed: "))}
	case strings.HasPrefix(line, "error: "):
		// Settle it here unless the supervisor already did: a supervisor
		// that could not even open the store leaves the job running.
		return nil, fail(errors.New(relayable(strings.TrimPrefix(line, "error: "))))
	}
	rec, gerr := r.store.Get(context.WithoutCancel(ctx), job.ID)
	if gerr == nil && rec.State.Settled() && handErr == nil {
		return nil, nil
	}
	output := lastWords(r.jobDir(job.ID))
	if !rr.hello {
		if rr.exe != r.binary {
			return nil, fail(fmt.Errorf("the supervisor binary %s ended without starting (it printed: %s): install the %s of bgcmd's own build beside it, or remove it", rr.exe, output, filepath.Base(rr.exe)))
		}
		return nil, fail(fmt.Errorf("the binary %s does not call runner.MaybeSupervise() at the top of main: add it, or set Options.Binary to the bgcmd binary (it printed: %s)", r.binary, output))
	}
	if handErr != nil {
		return nil, fail(handErr)
	}
	why := "exited before reporting"
	if errors.Is(err, os.ErrDeadlineExceeded) {
		why = fmt.Sprintf("did not report within %s", startupTimeout)
	} else if err != nil && !errors.Is(err, io.EOF) {
		why = err.Error()
	}
	return nil, fail(fmt.Errorf("detached supervisor %s %s: %s", rr.exe, why, output))
}

// relayable returns text from another process (a supervisor's report or
// log) fit to pass on in an error: newlines and tabs become spaces, other
// control characters (terminal escapes among them) and invalid UTF-8 are
// dropped.
func relayable(text string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c == '\n' || c == '\t':
			return ' '
		case c == utf8.RuneError, unicode.IsControl(c):
			return -1
		}
		return c
	}, strings.ToValidUTF8(text, ""))
}

// MaybeSupervise turns this process into a detached supervisor when it was
// started as one (os.Args[1] == SuperviseCommand): it supervises the job and
// exits. Otherwise it returns at once. bgcmd's main calls it first; a Go host
// that sets Options.Binary to its own executable must do the same.
func MaybeSupervise() {
	reaperReady.Store(true)
	if len(os.Args) >= 2 && os.Args[1] == ReapCommand {
		os.Exit(reap())
	}
	if len(os.Args) < 2 || os.Args[1] != SuperviseCommand {
		return
	}
	if err := Supervise(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "bgcmd supervisor:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// handoffEnded is the end of a supervisor whose host closed the hand-over
// before sending a job (a spare of a host that ended): not an error.
func handoffEnded(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
