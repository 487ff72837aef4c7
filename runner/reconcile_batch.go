package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/flock"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// reconcileBatchSize bounds how many orphaned jobs one claim transaction and
// one settle transaction take.
const reconcileBatchSize = 256

// reconcileDead settles the jobs of recs whose supervisor is dead, the work
// of reconcileJob done for many jobs at once: one turn of the reconcile
// lock, one claim transaction and one settle transaction per batch, the
// exit records written and the logs banked without a sync each, then made
// durable together by one sync of the filesystem before the settle that
// references them. A batch whose settle transaction fails as a whole is
// settled job by job.
func (r *Runner) reconcileDead(ctx context.Context, recs []*jobstore.Record, rep *ReconcileReport) []error {
	var dead []*jobstore.Record
	for _, rec := range recs {
		if r.supervisorAlive(rec) {
			rep.Alive++
			continue
		}
		dead = append(dead, rec)
	}
	if len(dead) == 0 {
		return nil
	}
	// Two reconcilers take turns: the second finds the jobs settled.
	unlock, err := flock.Lock(filepath.Join(r.jobsDir, reconcileLockName), true)
	if err != nil {
		return []error{fmt.Errorf("reconcile: %w", err)}
	}
	defer unlock()
	var errs []error
	for len(dead) > 0 {
		n := min(len(dead), reconcileBatchSize)
		errs = append(errs, r.reconcileBatch(ctx, dead[:n], rep)...)
		dead = dead[n:]
	}
	return errs
}

// orphanJob is one job of a batch on its way to its settle.
type orphanJob struct {
	rec  *jobstore.Record
	dir  string
	exit *exitRecord
	arts []bgcmd.Artifact
	res  reconcileResult
}

func (r *Runner) reconcileBatch(ctx context.Context, batch []*jobstore.Record, rep *ReconcileReport) []error {
	var errs []error
	// Read each job again under the lock, as reconcileJob does.
	var claims []jobstore.ClaimParams
	var jobs []*orphanJob
	for _, rec := range batch {
		fresh, err := r.store.Get(ctx, rec.ID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if fresh.State.Settled() {
			rep.Lost++
			continue
		}
		if fresh.SupervisorPID != rec.SupervisorPID || fresh.SupervisorStart != rec.SupervisorStart {
			rec = fresh
			if r.supervisorAlive(rec) {
				rep.Alive++
				continue
			}
		}
		claims = append(claims, jobstore.ClaimParams{ID: rec.ID, SupervisorPID: r.selfPID,
			SupervisorStart: r.selfTime, BootID: r.boot,
			FromPID: rec.SupervisorPID, FromStart: rec.SupervisorStart})
		jobs = append(jobs, &orphanJob{rec: rec, dir: r.jobDir(rec.ID)})
	}
	if len(jobs) == 0 {
		return errs
	}
	// Take the jobs over before touching their files (see reconcileJob).
	claimed, err := r.store.ClaimMany(ctx, claims)
	if err != nil {
		return append(errs, fmt.Errorf("reconcile: %w", err))
	}
	kept := jobs[:0]
	for i, j := range jobs {
		if !claimed[i] {
			rep.Lost++
			continue
		}
		kept = append(kept, j)
	}
	jobs = kept
	if len(jobs) == 0 {
		return errs
	}
	// The outcome of each job, recorded before banking moves its logs; the
	// records and the banked logs become durable together below.
	for _, j := range jobs {
		exit, err := readExitRecord(j.dir)
		if err != nil {
			exit = nil // a torn record is no record: settle as orphaned
		}
		j.exit, j.res = exit, reconcileExitRecord
		if exit == nil {
			j.res = reconcileOrphaned
			j.exit = r.orphanRecord(j.rec, j.dir)
			if err := writeExitRecordUnsynced(j.dir, j.exit); err != nil && !errors.Is(err, os.ErrNotExist) {
				j.exit.Error = joinMsg(j.exit.Error, "exit record not written: "+err.Error())
			}
		}
	}
	if err := r.arts.SyncFS(); err != nil {
		return append(errs, fmt.Errorf("reconcile: %w", err))
	}
	unlockArts, err := lockArtifacts(r.arts, false)
	if err != nil {
		return append(errs, fmt.Errorf("reconcile: %w", err))
	}
	defer unlockArts()
	deferred := &artifacts.Store{Dir: r.arts.Dir, DeferSync: true}
	for _, j := range jobs {
		arts, berr := bankStreams(ctx, r.store, deferred, j.dir, j.exit)
		if berr != nil {
			j.exit.Error = joinMsg(j.exit.Error, berr.Error())
		}
		j.arts = arts
	}
	if err := r.arts.SyncFS(); err != nil {
		return append(errs, fmt.Errorf("reconcile: %w", err))
	}
	ps := make([]jobstore.SettleParams, len(jobs))
	for i, j := range jobs {
		ps[i] = jobstore.SettleParams{ID: j.rec.ID, To: j.exit.State, ExitCode: j.exit.ExitCode,
			Signal: j.exit.Signal, Error: j.exit.Error, FinishedAt: j.exit.FinishedAt,
			Detail: j.exit.Detail, Artifacts: j.arts, ExpectSupervisorPID: r.selfPID, Usage: j.exit.Usage}
	}
	settleErrs, err := r.store.SettleMany(ctx, ps)
	if err != nil {
		// The batch as a whole failed (a busy or full disk, say): settle
		// each job on its own, with the retries a supervisor has.
		settleErrs = make([]error, len(jobs))
		for i, j := range jobs {
			_, settleErrs[i] = settleWithRetry(ctx, r.store, j.rec.ID, j.exit, j.arts, r.selfPID)
		}
	}
	for i, j := range jobs {
		switch err := settleErrs[i]; {
		case errors.Is(err, bgcmd.ErrInvalidTransition):
			rep.Lost++
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("job %s: %w", j.rec.ID, err))
			continue
		}
		if j.res == reconcileExitRecord {
			rep.FromExitRecord++
		} else {
			rep.Orphaned++
		}
		os.RemoveAll(j.dir)
		afterSettle(r.store, r.arts, r.jobsDir, j.rec.ID)
	}
	return errs
}
