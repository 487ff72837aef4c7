//go:build linux

package runner

import (
	"context"
	"errors"
	"os"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/stackroom"
)

// startWrittenBySupervisor hands job, whose row is not written yet, to the
// prepared supervisor p with specFor's spec (spec.SupervisorWrites): the
// supervisor starts the child, announces the row with the child in it and
// reports it running, then writes the row, so that this process does not
// touch the store on that path, and neither the store's open nor the row's
// write is what it waits for. It closes logf.
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

// createAfter returns the create of sup's job (spec.SupervisorWrites):
// the store is opened (or its open, begun already, waited for) and the
// row written, with the child in it once it runs. On SQLite the job has
// been announced and reported running by then (supervisor.announceTo), so
// that neither the open nor the create is what the caller waits for. The
// event feed's watchers are woken after.
func (ds *detachedSupervisor) createAfter(ctx context.Context, sup *supervisor) func() error {
	return func() error {
		if err := ds.openStore(ctx); err != nil {
			return err
		}
		sup.store = ds.st
		defer func() {
			notifyEvents(ds.st)
			// The settle's statements, while the job runs (see open).
			go func() { stackroom.Grow(); _ = ds.st.Prepare(ctx, jobstore.SettleWrites) }()
		}()
		return ds.st.Create(ctx, sup.job)
	}
}
