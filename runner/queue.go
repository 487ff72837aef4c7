package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/flock"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/policy"
)

// The queue.
//
// A start that a limit (policy max_running, a group's max_running) or a
// dependency (--after) concerns is queued: its row is created in state
// queued at once, and its supervisor is started as for any job but holds
// the job instead of spawning it. A detached supervisor received the
// environment over its hand-over socket and keeps the checked working directory
// open, exactly as for an immediate start; an in-process one is a
// goroutine of the host holding the same. Environment values therefore
// never touch the database or the disk, and any process that opens the
// home can dispatch the job: dispatching moves the row queued → running
// (a compare-and-set, under the home's dispatch lock) and creates a notice
// file in the job's directory, which the holder watches (inotify, with a
// slow poll as a safety net). The holder then runs the job; its timeout
// counts from then.
//
// Whoever frees a slot or settles a dependency dispatches: the supervisor
// after its settle, every start, reconcile, wait and kill. A holder that
// is gone (its process died, the machine rebooted) cannot run its job: the
// job settles orphaned without starting, and `bgcmd rerun` starts it again.

// dispatchNotice is the file a dispatcher creates in a queued job's
// directory: it wakes a holder of an older bgcmd, which watched the
// directory. Holders now listen on the job's wake socket (wakeJob).
const dispatchNotice = "dispatched"

// dispatchLockName is the lock file under jobs/ that dispatchers of one
// home take turns on.
const dispatchLockName = ".dispatch.lock"

// holdPoll is the holder's safety net under the directory watch.
const holdPoll = 2 * time.Second

// queueing decides whether the start waits in the queue and with which
// limits. An unknown group is a refusal (recorded).
func (r *Runner) queueing(ctx context.Context, session string, argv []string, o StartOptions) (jobstore.QueueLimits, bool, error) {
	var lim jobstore.QueueLimits
	if err := policy.CheckGroup(r.policy, o.Group); err != nil {
		return lim, false, r.recordRefusal(ctx, session, argv, o.Cwd, err)
	}
	lim.Queued = r.policy.QueueBound()
	if r.policy != nil {
		lim.Session = r.policy.MaxRunning
		if o.Group != "" {
			lim.Group = r.policy.Groups[o.Group].MaxRunning
		}
	}
	return lim, o.Group != "" || len(o.After) > 0 || lim.Session > 0, nil
}

// recordRefusal records a policy refusal and returns it (joined with a
// failure to record it).
func (r *Runner) recordRefusal(ctx context.Context, session string, argv []string, cwd string, err error) error {
	var ref *policy.Refusal
	if errors.As(err, &ref) {
		rerr := r.store.RecordRefusal(ctx, &bgcmd.Refusal{Session: session, Argv: argv,
			Cwd: cwd, Code: string(ref.Code), Message: ref.Message})
		return errors.Join(err, rerr)
	}
	return err
}

// enqueue creates the job queued, starts its holder and dispatches (the job
// may start at once). It returns the job as it then is.
func (r *Runner) enqueue(ctx context.Context, job *bgcmd.Job, o StartOptions, env, envChecked []string, cwd *os.File, lim jobstore.QueueLimits) (*bgcmd.Job, error) {
	job.Group = o.Group
	job.After = dedupe(o.After)
	job.Priority = o.Priority
	dir := r.jobDir(job.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("start: create job directory %s: %w (check that the home is writable and has space)", dir, err)
	}
	if err := r.store.CreateQueued(ctx, job, lim); err != nil {
		os.RemoveAll(dir)
		if errors.Is(err, jobstore.ErrBadDependency) {
			ref := &policy.Refusal{Code: policy.CodeBadDependency, Message: err.Error(),
				Hint: "name jobs of this session that exist (bgcmd list), with no cycle", Err: err}
			return nil, r.recordRefusal(ctx, job.Session, job.Argv, o.Cwd, ref)
		}
		if errors.Is(err, jobstore.ErrQueueFull) {
			ref := &policy.Refusal{Code: policy.CodeQueueFull, Message: err.Error(),
				Hint: "wait for queued jobs to start (bgcmd list --state queued), kill some, or raise max_queued in the policy", Err: err}
			return nil, r.recordRefusal(ctx, job.Session, job.Argv, o.Cwd, ref)
		}
		return nil, fmt.Errorf("start: %w", err)
	}
	if _, err := r.afterCreate(ctx, job); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	var err error
	if r.detached {
		err = r.launchDetached(ctx, job, env, envChecked, cwd)
	} else {
		err = r.holdInProcess(job, env, envChecked, cwd)
	}
	if err == nil {
		err = r.Dispatch(context.WithoutCancel(ctx))
	}
	rec, gerr := r.store.Get(context.WithoutCancel(ctx), job.ID)
	if gerr != nil {
		return nil, errors.Join(err, gerr)
	}
	return &rec.Job, err
}

// holdInProcess holds a queued job in a goroutine of this host, with its
// environment and a duplicate of its open working directory, until it is
// dispatched (then it runs like any in-process job) or settles unstarted.
func (r *Runner) holdInProcess(job *bgcmd.Job, env, envChecked []string, cwd *os.File) error {
	fd, err := unix.FcntlInt(cwd.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		r.settleUnstarted(job.ID, bgcmd.StateStartFailed, fmt.Sprintf("hold queued job: duplicate its working directory: %v", err))
		return fmt.Errorf("hold queued job %s: %w", job.ID, err)
	}
	held := os.NewFile(uintptr(fd), cwd.Name())
	sup := r.newSupervisor(job, env)
	sup.cwd = held
	r.mu.Lock()
	r.live[job.ID] = sup
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() {
			r.mu.Lock()
			delete(r.live, job.ID)
			r.mu.Unlock()
		}()
		defer held.Close()
		rec, released := awaitDispatch(context.Background(), r.store, job.ID, sup.kick)
		if !released {
			os.RemoveAll(sup.dir)
			close(sup.done)
			return
		}
		q := &queuedCheck{checked: job, pol: r.policy, env: env, envChecked: envChecked, cwd: held, digests: r.digests}
		sup.job = &rec.Job
		sup.precheck = func() error { return q.check(sup.job) }
		sup.run()
	}()
	return nil
}

// awaitDispatch blocks while the job is queued. It returns the job and true
// once it is running (dispatched), or false once it has settled (killed,
// dependency_failed, orphaned) or is gone.
func awaitDispatch(ctx context.Context, st *jobstore.Store, id string, kick <-chan struct{}) (*jobstore.Record, bool) {
	var wake <-chan struct{}
	if w, err := listenWake(wakeDirOf(st), id, false); err == nil {
		defer w.Close()
		wake = w.C
	}
	poll := time.NewTicker(holdPoll)
	defer poll.Stop()
	for {
		rec, err := st.Get(ctx, id)
		switch {
		case errors.Is(err, bgcmd.ErrNotFound):
			return nil, false
		case err == nil && rec.State == bgcmd.StateRunning:
			return rec, true
		case err == nil && rec.State.Settled():
			return rec, false
		}
		select {
		case _, ok := <-wake:
			if !ok {
				wake = nil
			}
		case <-kick:
		case <-poll.C:
		}
	}
}

// Dispatch starts every queued job of this host that is due: its
// dependencies exited 0 and its session and group have a free slot, oldest
// first. A job whose dependency failed settles dependency_failed; one
// whose holder is gone settles orphaned. Starts, settles, reconcile, wait
// and kill call it; it is safe to call from many processes at once: no job
// starts twice and no limit is exceeded.
func (r *Runner) Dispatch(ctx context.Context) error {
	return dispatch(ctx, r.store, r.jobsDir, r.holderGone, r.afterSettle)
}

// holderGone returns the error a queued job settles with when its holder
// (its supervisor) no longer runs, or "" while it does.
func (r *Runner) holderGone(rec *jobstore.Record) string {
	if r.supervisorAlive(rec) {
		return ""
	}
	return queuedOrphanMsg(rec, r.jobDir(rec.ID))
}

// holderGoneHere is holderGone for a process without a Runner (a
// supervisor that has just settled its job) whose jobs live in jobsDir;
// the boot id is read only when a holder is asked about.
func holderGoneHere(jobsDir string) func(*jobstore.Record) string {
	var boot string
	var once sync.Once
	return func(rec *jobstore.Record) string {
		once.Do(func() { boot = bootID() })
		sameBoot := rec.BootID == "" || boot == "" || rec.BootID == boot
		if sameBoot && alive(rec.SupervisorPID, rec.SupervisorStart) {
			return ""
		}
		return queuedOrphanMsg(rec, jobDirIn(jobsDir, rec.ID))
	}
}

// queuedOrphanMsg is the error of a queued job whose holder died: it never
// started, and its holder's last words are in its job directory dir.
func queuedOrphanMsg(rec *jobstore.Record, dir string) string {
	msg := fmt.Sprintf("its supervisor (pid %d) died while the job was queued; it never started (start it again with `bgcmd rerun %s`)", rec.SupervisorPID, rec.ID)
	return withLastWords(msg, dir)
}

// dispatch runs one dispatch pass under the home's dispatch lock, then
// wakes the holders of the jobs it started or settled, and calls
// afterSettle for each job it settled: the caller's own way of running
// hooks (a short command hands them to a detached supervisor, every
// process runs them under its reaper), never one of its own.
func dispatch(ctx context.Context, st *jobstore.Store, jobsDir string, holderGone func(*jobstore.Record) string, afterSettle func(id string)) error {
	has, err := st.HasQueued(ctx)
	if err != nil || !has {
		return err
	}
	unlock, err := lockFile(jobsDir, dispatchLockName)
	if err != nil {
		return fmt.Errorf("dispatch: %w", err)
	}
	res, err := st.Dispatch(ctx, holderGone)
	unlock()
	if err != nil {
		return err
	}
	for _, rec := range res.Started {
		if f, err := os.OpenFile(filepath.Join(jobDirIn(jobsDir, rec.ID), dispatchNotice), os.O_CREATE|os.O_WRONLY|unix.O_NOFOLLOW, 0o600); err == nil {
			f.Close()
		}
		wakeJob(wakeDirOf(st), rec.ID)
	}
	for _, rec := range res.Settled {
		wakeJob(wakeDirOf(st), rec.ID)
		os.RemoveAll(jobDirIn(jobsDir, rec.ID))
		afterSettle(rec.ID)
	}
	if len(res.Started) > 0 {
		notifyEvents(st)
	}
	return nil
}

// settleUnstarted settles a queued job that never started, outside a
// dispatch pass, and wakes what waits on it.
func (r *Runner) settleUnstarted(id string, to bgcmd.State, msg string) (*jobstore.Record, error) {
	rec, err := r.store.SettleQueued(context.Background(), id, to, msg, nil)
	if err != nil {
		return nil, err
	}
	wakeJob(wakeDirOf(r.store), id)
	os.RemoveAll(r.jobDir(id))
	r.afterSettle(id)
	return rec, nil
}

// reconcileQueued settles the queued jobs of this host whose holder is
// gone; they can never run (their environment went with the holder).
func (r *Runner) reconcileQueued(ctx context.Context) (int, error) {
	recs, err := r.store.QueuedOnHost(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, rec := range recs {
		msg := r.holderGone(rec)
		if msg == "" {
			continue
		}
		if _, err := r.settleUnstarted(rec.ID, bgcmd.StateOrphaned, msg); err == nil {
			n++
		} else if !errors.Is(err, bgcmd.ErrInvalidTransition) {
			return n, err
		}
	}
	return n, nil
}

// killQueued settles a queued job as killed without starting a process. It
// reports false when the job left the queue meanwhile (it was dispatched:
// the caller kills it as a running job).
func (r *Runner) killQueued(ctx context.Context, rec *jobstore.Record, sig string) (*bgcmd.Status, bool, error) {
	out, err := r.settleUnstarted(rec.ID, bgcmd.StateKilled, fmt.Sprintf("killed while queued (%s requested): it never started", sig))
	if errors.Is(err, bgcmd.ErrInvalidTransition) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	_ = r.Dispatch(ctx) // its dependants fail now
	st, err := r.status(ctx, out, false)
	return st, true, err
}

func dedupe(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func jobDirIn(jobsDir, id string) string { return filepath.Join(jobsDir, id) }

func lockFile(jobsDir, name string) (func(), error) {
	return flock.Lock(filepath.Join(jobsDir, name), true)
}
