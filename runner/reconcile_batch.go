package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/flock"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// reconcileBatchSize bounds how many orphaned jobs one claim transaction and
// one settle transaction take.
const reconcileBatchSize = 256

// reconcileWorkers is how many jobs of a batch have their files handled at
// once: the work is system calls that mostly wait on the filesystem.
const reconcileWorkers = 8

// banker banks a log as an artifact: *artifacts.Store moves it (Bank), and
// linkBanker links it (BankLink).
type banker interface {
	Bank(logPath string, sum *artifacts.Summary) (artifacts.Summary, string, error)
	// Path is where an artifact is banked.
	Path(sha256 string) string
}

// linkBanker banks by hard link, leaving the logs in the job directory.
type linkBanker struct{ *artifacts.Store }

// Bank banks the log by a hard link (artifacts.Store.BankLink).
func (b linkBanker) Bank(logPath string, sum *artifacts.Summary) (artifacts.Summary, string, error) {
	return b.BankLink(logPath, sum)
}

// reconcileDead settles the jobs of recs whose supervisor is dead, the work
// of reconcileJob done for many jobs at once: one turn of the reconcile
// lock, one claim transaction and one settle transaction per batch, the logs
// banked by hard link (several jobs at a time) without a sync each, then
// made durable together by one sync of the filesystem before the settle that
// references them. The logs stay in the job directory until the settle has
// committed, so a reconciler that dies in between leaves them to the next
// one: an orphan needs no exit record of its own, and a dead supervisor's
// exit record stays beside its logs until its status is in the store. A
// batch whose settle transaction fails as a whole is settled job by job.
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
	// Read the jobs' supervisors again under the lock, as reconcileJob
	// reads its job: one query.
	fresh, err := r.store.RunningSupervisors(ctx)
	if err != nil {
		return []error{fmt.Errorf("reconcile: %w", err)}
	}
	// Take every batch over first: the claims are short transactions, and
	// the files of one batch are then handled while the next waits for
	// nothing but the store.
	var errs []error
	var batches [][]*orphanJob
	for len(dead) > 0 {
		n := min(len(dead), reconcileBatchSize)
		jobs, cerrs := r.claimBatch(ctx, dead[:n], fresh, rep)
		errs = append(errs, cerrs...)
		if len(jobs) > 0 {
			batches = append(batches, jobs)
		}
		dead = dead[n:]
	}
	if len(batches) == 0 {
		return errs
	}
	settled, serrs := r.settleBatches(ctx, batches, rep)
	errs = append(errs, serrs...)
	if len(settled) > 0 {
		r.afterReconcile(ctx, settled)
	}
	return errs
}

// settleBatches banks the logs of each batch of claimed jobs and settles
// them, a batch at a time, in order. The files of the next batch are
// handled (system calls that mostly wait on the filesystem, then one sync
// of it) while the store settles the batch before (which is CPU): a
// batch's settle still comes after the sync that made its banked logs
// durable. The artifacts lock is held, shared, until the last settle, so
// no prune removes a banked log before a row references it. It returns
// the ids of the jobs it settled.
func (r *Runner) settleBatches(ctx context.Context, batches [][]*orphanJob, rep *ReconcileReport) ([]string, []error) {
	unlockArts, err := r.arts.Lock(false)
	if err != nil {
		return nil, []error{fmt.Errorf("reconcile: %w", err)}
	}
	defer unlockArts()
	bank := linkBanker{&artifacts.Store{Dir: r.arts.Dir, DeferSync: true}}
	type banked struct {
		jobs []*orphanJob
		err  error // the sync's: the batch is left claimed, unsettled
	}
	ready := make(chan banked, 1)
	go func() {
		defer close(ready)
		for _, jobs := range batches {
			inParallel(len(jobs), reconcileWorkers, func(i int) { r.prepareSettle(ctx, jobs[i], bank) })
			ready <- banked{jobs: jobs, err: r.arts.SyncFS()}
		}
	}()
	var settled []string
	var errs []error
	for b := range ready {
		if b.err != nil {
			errs = append(errs, fmt.Errorf("reconcile: %w", b.err))
			continue
		}
		ids, berrs := r.settleBatch(ctx, b.jobs, rep)
		settled = append(settled, ids...)
		errs = append(errs, berrs...)
	}
	return settled, errs
}

// afterReconcile is the rest of afterSettle for the jobs a reconcile
// settled (each batch woke the event feed's watchers): the hooks of those
// that have one started, and their directories (their logs banked, their
// status in the store) removed in the background.
func (r *Runner) afterReconcile(ctx context.Context, settled []string) {
	if ids, err := r.store.UnclaimedSettleHooks(ctx); err == nil && len(ids) > 0 {
		ours := make(map[string]bool, len(settled))
		for _, id := range settled {
			ours[id] = true
		}
		// Not ours: runUnclaimedHooks decides.
		r.startHooks(ctx, slices.DeleteFunc(ids, func(id string) bool { return !ours[id] }))
	}
	// Off the reconcile's path, as a supervisor's settle does; Close waits.
	pendingHooks.Add(1)
	go func() {
		defer pendingHooks.Done()
		inParallel(len(settled), reconcileWorkers, func(i int) { removeJobDir(r.jobDir(settled[i])) })
	}()
}

// removeJobDir removes a settled job's directory: the files a job leaves
// unlinked by name, then the directory, and whatever else it holds the slow
// way.
func removeJobDir(dir string) {
	for _, name := range []string{"stdout.log", "stderr.log", "stdout.log" + artifacts.IndexSuffix,
		"stderr.log" + artifacts.IndexSuffix, exitRecordName} {
		_ = unix.Unlinkat(unix.AT_FDCWD, filepath.Join(dir, name), 0)
	}
	if err := unix.Rmdir(dir); err != nil {
		os.RemoveAll(dir)
	}
}

// orphanJob is one job of a batch on its way to its settle.
type orphanJob struct {
	rec  *jobstore.Record
	dir  string
	exit *exitRecord
	arts []bgcmd.Artifact
	res  reconcileResult
}

// claimBatch takes over the dead jobs of batch from their supervisors, in
// one transaction; fresh is what the store said of the running jobs'
// supervisors under the reconcile lock. It returns the jobs it claimed.
func (r *Runner) claimBatch(ctx context.Context, batch []*jobstore.Record, fresh map[string]jobstore.SupervisorRef, rep *ReconcileReport) ([]*orphanJob, []error) {
	var errs []error
	var claims []jobstore.ClaimParams
	var jobs []*orphanJob
	for _, rec := range batch {
		now, ok := fresh[rec.ID]
		if !ok {
			rep.Lost++ // settled (or pruned) meanwhile
			continue
		}
		if now.PID != rec.SupervisorPID || now.Start != rec.SupervisorStart {
			// Another supervisor took it over since: judge that one.
			again, err := r.store.Get(ctx, rec.ID)
			switch {
			case errors.Is(err, bgcmd.ErrNotFound):
				rep.Lost++ // pruned meanwhile
				continue
			case err != nil:
				errs = append(errs, fmt.Errorf("reconcile: %w", err))
				continue
			case again.State != bgcmd.StateRunning:
				rep.Lost++
				continue
			}
			rec = again
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
		return nil, errs
	}
	// Take the jobs over before touching their files (see reconcileJob).
	claimed, err := r.store.ClaimMany(ctx, claims)
	if err != nil {
		return nil, append(errs, fmt.Errorf("reconcile: %w", err))
	}
	kept := jobs[:0]
	for i, j := range jobs {
		if !claimed[i] {
			rep.Lost++
			continue
		}
		endStoppedSupervisor(j.rec)
		kept = append(kept, j)
	}
	return kept, errs
}

// settleBatch settles the claimed jobs of a batch whose logs are banked
// and durable, in one transaction (job by job if that fails as a whole).
// It returns the ids of the jobs it settled.
func (r *Runner) settleBatch(ctx context.Context, jobs []*orphanJob, rep *ReconcileReport) ([]string, []error) {
	var errs []error
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
	var settled []string
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
		settled = append(settled, j.rec.ID)
	}
	if len(settled) > 0 {
		notifyEvents(r.store) // told at once, as a supervisor's settle tells
	}
	return settled, errs
}

// prepareSettle finds the outcome of a claimed job and banks its logs: the
// exit record its supervisor left, or else, with what is left of its
// process group killed, orphaned with what its logs hold.
func (r *Runner) prepareSettle(ctx context.Context, j *orphanJob, bank banker) {
	exit, err := readExitRecord(j.dir)
	if err != nil {
		exit = nil // a torn record is no record: settle as orphaned
	}
	j.exit, j.res = exit, reconcileExitRecord
	if exit != nil {
		r.killOrphanGroup(j.rec) // as reconcileJob does: a job may write one
	}
	if exit == nil {
		j.res = reconcileOrphaned
		killed := r.killOrphanGroup(j.rec)
		// Banking scans the logs (a nil summary) and says what they hold.
		streams := map[bgcmd.Stream]*artifacts.Summary{}
		for _, st := range []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr} {
			if _, err := os.Lstat(filepath.Join(j.dir, string(st)+".log")); errors.Is(err, os.ErrNotExist) {
				streams[st] = &artifacts.Summary{SHA256: artifacts.EmptySHA256} // never written
			}
		}
		j.exit = &exitRecord{Streams: streams}
		arts, berr := bankStreams(ctx, r.store, bank, j.dir, j.exit)
		j.exit = r.orphanExit(j.rec, j.dir, killed, j.exit.Streams)
		j.arts = arts
		if berr != nil {
			j.exit.Error = joinMsg(j.exit.Error, berr.Error())
		}
		return
	}
	arts, berr := bankStreams(ctx, r.store, bank, j.dir, j.exit)
	if berr != nil {
		j.exit.Error = joinMsg(j.exit.Error, berr.Error())
	}
	j.arts = arts
}

// inParallel calls do(i) for every i below n, at most workers at a time, and
// returns when all have returned.
func inParallel(n, workers int, do func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				do(i)
			}
		}()
	}
	wg.Wait()
}
