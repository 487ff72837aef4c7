package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/flock"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// ReconcileReport says what one reconcile pass did.
type ReconcileReport struct {
	// Checked running jobs of this host.
	Checked int `json:"checked"`
	// Alive: their supervisor is alive; left alone.
	Alive int `json:"alive"`
	// FromExitRecord: settled from the exit record the supervisor wrote
	// before it died.
	FromExitRecord int `json:"from_exit_record"`
	// Orphaned: no exit record; leftover processes killed, logs banked.
	Orphaned int `json:"orphaned"`
	// Lost: settled meanwhile by someone else (another reconciler, or the
	// supervisor itself).
	Lost int `json:"lost"`
}

// Reconcile settles every running job of this host whose supervisor is gone:
// from its exit record when there is one (the true exit status), else as
// orphaned after killing what remains of its process group and banking its
// logs as they are. Jobs whose supervisor is alive are left alone. After a
// reboot every running job is reconciled. It is idempotent and safe when two
// processes run it at once: each job is settled once.
func (r *Runner) Reconcile(ctx context.Context) (*ReconcileReport, error) {
	if err := r.landAnnounced(ctx); err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	recs, err := r.store.RunningOnHost(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	rep := &ReconcileReport{Checked: len(recs)}
	errs := r.reconcileDead(ctx, recs, rep)
	if _, err := r.reconcileQueued(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := r.Dispatch(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := r.runUnclaimedHooks(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("reconcile: %w", err)
	}
	return rep, nil
}

// reconcileLockName is the lock file under jobs/ that reconcilers of one
// home take turns on.
const reconcileLockName = ".reconcile.lock"

type reconcileResult int

const (
	reconcileAlive reconcileResult = iota
	reconcileExitRecord
	reconcileOrphaned
	reconcileLost
)

// supervisorAlive reports whether the job's supervisor still runs in this
// boot of the machine and is not stopped (supervisorStopped). Another
// host's job is presumed alive: its pids and boot id are that machine's,
// and only its own host reconciles it.
func (r *Runner) supervisorAlive(rec *jobstore.Record) bool {
	if !r.ownJob(rec) {
		return true // another host's supervisor: not this host's to judge
	}
	if rec.BootID != "" && r.boot != "" && rec.BootID != r.boot {
		return false
	}
	if r.liveSupervisor(rec.ID) != nil {
		return true
	}
	st, ok := aliveStat(rec.SupervisorPID, rec.SupervisorStart)
	return ok && !supervisorStopped(rec, st)
}

// supervisorStopped reports whether the job's detached supervisor, whose
// stat is st, is stopped (a SIGSTOP, a tracer's stop). A stopped
// supervisor enforces neither the job's timeout nor a kill request, and
// the job itself can stop it, being its child and of the same user:
// reconcile takes such a job over as from a dead supervisor, and ends the
// supervisor once the job is claimed (endStoppedSupervisor). Nothing
// stops a detached supervisor otherwise: it has no terminal whose job
// control could.
func supervisorStopped(rec *jobstore.Record, st procStat) bool {
	return rec.Detached && stoppedState(st.state)
}

// landAnnounced writes the rows of the creates announced by detached
// supervisors (jobstore.Announce) that ended before they wrote them, so
// that reconcile settles those jobs below as any job whose supervisor
// died; it waits for those that are writing theirs. A supervisor of this
// host that was stopped in that window (its own job can stop it) holds
// its record, which the store's readers neither wait for nor land: it is
// ended first, as reconcile ends a stopped supervisor of a job on record.
func (r *Runner) landAnnounced(ctx context.Context) error {
	jobs, err := r.store.Announced()
	if err != nil || len(jobs) == 0 {
		return err
	}
	for _, j := range jobs {
		if rec := (&jobstore.Record{Job: *j}); r.ownJob(rec) {
			endStoppedSupervisor(rec)
		}
	}
	return r.store.LandAnnounced(ctx)
}

// endStoppedSupervisor kills the job's detached supervisor if it is still
// the stopped process supervisorStopped saw, so that it never resumes to
// act on a job reconcile has taken over.
func endStoppedSupervisor(rec *jobstore.Record) {
	if rec.Detached {
		signalIf(rec.SupervisorPID, syscall.SIGKILL, func(st procStat) bool {
			return st.start == rec.SupervisorStart && supervisorStopped(rec, st)
		})
	}
}

func (r *Runner) reconcileJob(ctx context.Context, rec *jobstore.Record) (reconcileResult, error) {
	if r.supervisorAlive(rec) {
		return reconcileAlive, nil
	}
	if rec.State == bgcmd.StateQueued {
		if _, err := r.reconcileQueued(ctx); err != nil {
			return 0, err
		}
		return reconcileOrphaned, nil
	}
	// Two reconcilers take turns: the second finds the job settled.
	unlock, err := flock.Lock(filepath.Join(r.jobsDir, reconcileLockName), true)
	if err != nil {
		return 0, fmt.Errorf("job %s: %w", rec.ID, err)
	}
	defer unlock()
	fresh, err := r.store.Get(ctx, rec.ID)
	if err != nil {
		return 0, err
	}
	if fresh.State.Settled() {
		return reconcileLost, nil
	}
	if fresh.SupervisorPID != rec.SupervisorPID || fresh.SupervisorStart != rec.SupervisorStart {
		rec = fresh
		if r.supervisorAlive(rec) {
			return reconcileAlive, nil
		}
	}
	// Take the job over from the dead supervisor before touching its files:
	// a late detached supervisor, claiming from its host, then loses and
	// starts nothing, and of two reconcilers exactly one goes on.
	if err := r.store.Claim(ctx, jobstore.ClaimParams{ID: rec.ID, SupervisorPID: r.selfPID,
		SupervisorStart: r.selfTime, BootID: r.boot,
		FromPID: rec.SupervisorPID, FromStart: rec.SupervisorStart}); err != nil {
		if errors.Is(err, bgcmd.ErrInvalidTransition) {
			return reconcileLost, nil
		}
		return 0, fmt.Errorf("job %s: %w", rec.ID, err)
	}
	endStoppedSupervisor(rec)
	dir := r.jobDir(rec.ID)
	exit, err := readExitRecord(dir)
	if err != nil {
		exit = nil // a torn record is no record: settle as orphaned
	}
	result := reconcileExitRecord
	if exit != nil {
		// A supervisor writes its record once nothing of the job is left;
		// a record the job wrote itself must not leave the job running.
		r.killOrphanGroup(rec)
	}
	if exit == nil {
		result = reconcileOrphaned
		exit = r.orphanRecord(rec, dir)
		// Record the outcome and what the logs hold before banking moves
		// them: a reconciler that dies after banking leaves a record that
		// finds the artifacts by hash, not an orphan with no output.
		if err := writeExitRecord(dir, exit); err != nil && !errors.Is(err, os.ErrNotExist) {
			exit.Error = joinMsg(exit.Error, "exit record not written: "+err.Error())
		}
	}
	unlockArts, err := r.arts.Lock(false)
	if err != nil {
		return 0, fmt.Errorf("job %s: %w", rec.ID, err)
	}
	arts, berr := bankStreams(ctx, r.store, r.arts, dir, exit)
	if berr != nil {
		exit.Error = joinMsg(exit.Error, berr.Error())
	}
	_, err = settleWithRetry(ctx, r.store, rec.ID, exit, arts, r.selfPID)
	unlockArts()
	switch {
	case errors.Is(err, bgcmd.ErrInvalidTransition):
		return reconcileLost, nil
	case err != nil:
		return 0, fmt.Errorf("job %s: %w", rec.ID, err)
	}
	os.RemoveAll(dir)
	r.afterSettle(rec.ID)
	return result, nil
}

// orphanRecord kills what is left of the job's process group (only when the
// group is provably the job's) and describes the orphaning with what its
// logs hold now.
func (r *Runner) orphanRecord(rec *jobstore.Record, dir string) *exitRecord {
	killed := r.killOrphanGroup(rec)
	streams := map[bgcmd.Stream]*artifacts.Summary{}
	for _, st := range []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr} {
		sum, err := artifacts.Summarize(filepath.Join(dir, string(st)+".log"))
		switch {
		case err == nil:
			streams[st] = &sum
		case errors.Is(err, os.ErrNotExist):
			streams[st] = &artifacts.Summary{SHA256: artifacts.EmptySHA256} // never written
		}
	}
	return r.orphanExit(rec, dir, killed, streams)
}

// killOrphanGroup kills what is left of the job's process group, only when
// the group is provably the job's, and returns how many processes it killed.
func (r *Runner) killOrphanGroup(rec *jobstore.Record) int {
	if !r.sameBoot(rec) || rec.PGID <= 1 {
		return 0
	}
	leader, err := readProcStat(rec.PID)
	leaderIsOurs := err == nil && leader.start == rec.PIDStart
	leaderGone := err != nil
	switch {
	case leaderIsOurs:
		return killLeftovers(rec.PGID)
	case leaderGone && rec.Detached:
		// The group id may belong to a stranger's new group by now:
		// only members in the dead supervisor's session are the job's.
		return killGroupInSession(rec.PGID, rec.SupervisorPID)
	case leaderGone:
		return killLeftovers(rec.PGID)
	}
	return 0
}

func (r *Runner) sameBoot(rec *jobstore.Record) bool {
	return rec.BootID == "" || rec.BootID == r.boot
}

// orphanExit describes the orphaning of a job whose killOrphanGroup killed
// killed processes and whose logs hold streams (a nil stream: unreadable),
// with what its supervisor printed in the job directory dir.
func (r *Runner) orphanExit(rec *jobstore.Record, dir string, killed int, streams map[bgcmd.Stream]*artifacts.Summary) *exitRecord {
	var kept [2]int64
	for i, st := range []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr} {
		if sum := streams[st]; sum != nil {
			kept[i] = sum.Bytes
		}
	}
	why := fmt.Sprintf("supervisor (pid %d) died", rec.SupervisorPID)
	if !r.sameBoot(rec) {
		why = "the machine rebooted"
	}
	msg := fmt.Sprintf("%s without recording an exit; killed %d leftover process(es) of group %d; kept %d bytes of stdout and %d bytes of stderr",
		why, killed, rec.PGID, kept[0], kept[1])
	msg = withLastWords(msg, dir)
	return &exitRecord{State: bgcmd.StateOrphaned, Error: msg, FinishedAt: r.now().UTC(),
		Detail: map[string]any{"leftover_processes_killed": killed, "reason": why,
			"dead_supervisor_pid": rec.SupervisorPID}, Streams: streams}
}
