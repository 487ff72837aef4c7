package runner

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// killRequestPrefix names the files that announce a kill request in a job's
// directory; the supervisor removes them when it reads the row. A
// supervisor of an older bgcmd watched the directory for them; one now is
// woken by its wake socket (wakeJob).
const killRequestPrefix = "kill-request."

// Kill asks the job's supervisor to signal the whole process group with sig
// (0 means SIGTERM), escalating to SIGKILL after the grace period; the job
// settles as killed and its output is kept. It works from any process that
// opens the same store, on any host: on the job's own host the request is
// delivered directly, on another it is recorded in the store and the
// owning supervisor acts on it (RequestKill). Kill waits for the settle up
// to the grace period plus a margin and returns the status as it then is.
// A settled job's status is returned unchanged, without error; an unknown
// id wraps bgcmd.ErrNotFound. Like Await it only reads: a caller that
// takes the result in calls Read.
func (r *Runner) Kill(ctx context.Context, id string, sig syscall.Signal) (*bgcmd.Status, error) {
	rec, st, err := r.requestKill(ctx, id, sig)
	if st != nil || err != nil {
		return st, err
	}
	return r.Await(ctx, id, rec.KillGrace+3*time.Second)
}

// RequestKill is Kill without the wait: it returns once the request is
// recorded (and, on the job's own host, delivered), with the job's status
// as it then is. For a job of another host (Status.HostID is not HostID)
// that host's supervisor stops it: at once when the hosts share the
// store's directory or a PostgreSQL database (the request travels by
// NOTIFY), else within a second. Await waits for the settle.
func (r *Runner) RequestKill(ctx context.Context, id string, sig syscall.Signal) (*bgcmd.Status, error) {
	rec, st, err := r.requestKill(ctx, id, sig)
	if st != nil || err != nil {
		return st, err
	}
	return r.status(ctx, rec, false)
}

// requestKill records the request and delivers it. It returns a status
// when there is nothing to wait for (the job had settled, or was queued and
// is now killed), else the job's record.
func (r *Runner) requestKill(ctx context.Context, id string, sig syscall.Signal) (*jobstore.Record, *bgcmd.Status, error) {
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	rec, err := r.store.RequestKill(ctx, id, SignalName(sig))
	if err != nil {
		return nil, nil, err
	}
	if rec.State == bgcmd.StateQueued {
		if st, done, err := r.killQueued(ctx, rec, SignalName(sig)); done {
			return nil, st, err
		}
		if rec, err = r.store.RequestKill(ctx, id, SignalName(sig)); err != nil { // dispatched meanwhile
			return nil, nil, err
		}
	}
	if rec.State.Settled() {
		st, err := r.status(ctx, rec, false)
		return nil, st, err
	}
	if !r.ownJob(rec) {
		// Its pids are another machine's: the row carries the request to
		// the owning supervisor; its wake socket (when the hosts share the
		// database's folder) or, on PostgreSQL, the NOTIFY the commit sent
		// wakes it.
		notifyKill(r.store)
		wakeKeeper(wakeDirOf(r.store), rec)
		return rec, nil, nil
	}
	if sup := r.liveSupervisor(id); sup != nil {
		select {
		case sup.kick <- struct{}{}:
		default:
		}
	} else if rec.SupervisorPID != 0 && !alive(rec.SupervisorPID, rec.SupervisorStart) {
		// Nobody will act on the request: settle it as reconcile would.
		if _, err := r.reconcileJob(ctx, rec); err != nil {
			return nil, nil, err
		}
	} else {
		f, err := os.CreateTemp(r.jobDir(id), killRequestPrefix+"*")
		if err != nil {
			// The job may have settled and its directory gone meanwhile.
			if now, gerr := r.store.Get(ctx, id); gerr == nil && now.State.Settled() {
				st, err := r.status(ctx, now, false)
				return nil, st, err
			}
			return nil, nil, fmt.Errorf("announce kill request for job %s: %w", id, err)
		}
		f.Close()
		wakeKeeper(wakeDirOf(r.store), rec)
	}
	return rec, nil, nil
}
