//go:build linux

package runner

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// startWrittenBySupervisor hands job, whose row is not written yet, to the
// prepared supervisor p with specFor's spec (spec.SupervisorWrites): the
// supervisor starts the child, writes the row with the child in it and
// reports it running, so that this process does not touch the store on
// that path. It closes logf.
//
// Any other end is made sure of through the store: a start that failed is
// on record as start_failed (the supervisor's, read back); a supervisor
// that reported an error or fell silent has what is left of its process
// tree ended, as startDetached does, and the attempt is on record as
// start_failed unless the supervisor had written the row (reconcile then
// settles it, as for any supervisor that died).
func (r *Runner) startWrittenBySupervisor(ctx context.Context, job *bgcmd.Job, p *supProc, logf, cwd *os.File, specFor func(*supProc) *spec) (*bgcmd.Job, error) {
	defer logf.Close()
	p, rr, err := r.sendSpec(p, logf, cwd, specFor, nil)
	if p == nil {
		return r.readBack(ctx, job.ID, r.failUnrecorded(ctx, job, err))
	}
	p.conn.Close()
	failed := func(err error) error {
		endSupervisorTree(p.pid, p.start)
		if _, gerr := r.store.Get(context.WithoutCancel(ctx), job.ID); gerr == nil {
			return err // on record: reconcile settles it as for any supervisor that died
		}
		return r.failUnrecorded(ctx, job, err)
	}
	started, err := r.awaitStartup(ctx, job, rr, err, nil, failed)
	r.refillSpare()
	var nf notStarted
	switch {
	case errors.As(err, &nf):
		// Not this protocol's report: the job is not on record.
		return r.readBack(ctx, job.ID, failed(nf))
	case err != nil:
		return r.readBack(ctx, job.ID, err)
	case started == nil:
		return r.readBack(ctx, job.ID, nil) // "ok": settled already, start_failed
	}
	// As the supervisor's create wrote it: its store is this one's.
	j := started.job(job, p)
	j.Host, j.HostID, j.State = r.store.Host(), r.store.HostID(), bgcmd.StateRunning
	return j, nil
}

// createAhead begins, in the background, the create of the job of sup
// (spec.SupervisorWrites) once the store is open: the row is written
// ahead, in a transaction left open while the child starts, as a host
// does (startDetached). It returns sup's create: the commit of that
// transaction with the child's pid and start in the row, or, when it
// could not begin or was let go (after pendingHold, a child slow to
// start) or the child did not start, the whole create. Either way the
// event feed's watchers are woken.
func (ds *detachedSupervisor) createAhead(ctx context.Context, sup *supervisor) func() error {
	type begun struct {
		pending *jobstore.PendingCreate
		err     error
	}
	ahead := make(chan begun, 1)
	ahead0 := *sup.job // the child's start fills in sup.job meanwhile
	go func() {
		if err := ds.openStore(ctx); err != nil {
			ahead <- begun{err: err}
			return
		}
		pending, err := ds.st.BeginCreate(ctx, &ahead0)
		if err == nil {
			time.AfterFunc(pendingHold, pending.Abort) // after a commit, it does nothing
		}
		ahead <- begun{pending, err}
	}()
	return func() error {
		b := <-ahead // after the open: ds's store is set, or openStore says why not
		if err := ds.openStore(ctx); err != nil {
			return err
		}
		sup.store = ds.st
		defer func() {
			notifyEvents(ds.st)
			// The settle's statements, while the job runs (see open).
			go func() { _ = ds.st.Prepare(ctx, jobstore.SettleWrites) }()
		}()
		j := sup.job
		if b.err == nil && j.StartedAt != nil {
			err := b.pending.Commit(ctx, jobstore.StartedParams{ID: j.ID, PID: j.PID, PGID: j.PGID,
				PIDStart: j.PIDStart, StartedAt: *j.StartedAt})
			if !errors.Is(err, jobstore.ErrCreateDropped) {
				return err
			}
		} else if b.err == nil {
			b.pending.Abort() // no child: the row is written as it reads now
		}
		return ds.st.Create(ctx, j)
	}
}
