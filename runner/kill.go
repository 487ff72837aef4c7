package runner

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/bgcmd/bgcmd"
)

// killRequestPrefix names the files that announce a kill request in a job's
// directory; the supervisor watches for them and removes them.
const killRequestPrefix = "kill-request."

// Kill asks the job's supervisor to signal the whole process group with sig
// (0 means SIGTERM), escalating to SIGKILL after the grace period; the job
// settles as killed and its output is kept. It works from any process that
// opens the same home. Kill waits for the settle up to the grace period plus
// a margin and returns the status as it then is. A settled job's status is
// returned unchanged, without error; an unknown id wraps bgcmd.ErrNotFound.
// Like Await it only reads: a caller that takes the result in calls Read.
func (r *Runner) Kill(ctx context.Context, id string, sig syscall.Signal) (*bgcmd.Status, error) {
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	rec, err := r.store.RequestKill(ctx, id, SignalName(sig))
	if err != nil {
		return nil, err
	}
	if rec.State == bgcmd.StateQueued {
		if st, done, err := r.killQueued(ctx, rec, SignalName(sig)); done {
			return st, err
		}
		if rec, err = r.store.RequestKill(ctx, id, SignalName(sig)); err != nil { // dispatched meanwhile
			return nil, err
		}
	}
	if rec.State.Settled() {
		return r.status(ctx, rec, false)
	}
	if sup := r.liveSupervisor(id); sup != nil {
		select {
		case sup.kick <- struct{}{}:
		default:
		}
	} else if rec.SupervisorPID != 0 && !alive(rec.SupervisorPID, rec.SupervisorStart) {
		// Nobody will act on the request: settle it as reconcile would.
		if _, err := r.reconcileJob(ctx, rec); err != nil {
			return nil, err
		}
	} else {
		f, err := os.CreateTemp(r.jobDir(id), killRequestPrefix+"*")
		if err != nil {
			// The job may have settled and its directory gone meanwhile.
			if now, gerr := r.store.Get(ctx, id); gerr == nil && now.State.Settled() {
				return r.status(ctx, now, false)
			}
			return nil, fmt.Errorf("announce kill request for job %s: %w", id, err)
		}
		f.Close()
	}
	return r.Await(ctx, id, rec.KillGrace+3*time.Second)
}
