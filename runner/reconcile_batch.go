package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	// Read the jobs again under the lock, as reconcileJob does: one query.
	now, err := r.store.RunningOnHost(ctx)
	if err != nil {
		return []error{fmt.Errorf("reconcile: %w", err)}
	}
	fresh := make(map[string]*jobstore.Record, len(now))
	for _, rec := range now {
		fresh[rec.ID] = rec
	}
	var errs []error
	var settled []string
	for len(dead) > 0 {
		n := min(len(dead), reconcileBatchSize)
		ids, berrs := r.reconcileBatch(ctx, dead[:n], fresh, rep)
		settled = append(settled, ids...)
		errs = append(errs, berrs...)
		dead = dead[n:]
	}
	if len(settled) > 0 {
		r.afterReconcile(ctx, settled)
	}
	return errs
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
		for _, id := range ids {
			if !ours[id] {
				continue // not ours: runUnclaimedHooks decides
			}
			pendingHooks.Add(1)
			go func() {
				defer pendingHooks.Done()
				_ = runSettleHook(context.WithoutCancel(ctx), r.store, r.arts, r.jobsDir, id)
			}()
		}
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

// reconcileBatch settles the dead jobs of batch; fresh is what the store
// said of the running jobs under the reconcile lock. It returns the ids of
// the jobs it settled.
func (r *Runner) reconcileBatch(ctx context.Context, batch []*jobstore.Record, fresh map[string]*jobstore.Record, rep *ReconcileReport) ([]string, []error) {
	var errs []error
	var claims []jobstore.ClaimParams
	var jobs []*orphanJob
	for _, rec := range batch {
		now := fresh[rec.ID]
		if now == nil {
			rep.Lost++ // settled (or pruned) meanwhile
			continue
		}
		if now.SupervisorPID != rec.SupervisorPID || now.SupervisorStart != rec.SupervisorStart {
			rec = now
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
		kept = append(kept, j)
	}
	jobs = kept
	if len(jobs) == 0 {
		return nil, errs
	}
	unlockArts, err := r.arts.Lock(false)
	if err != nil {
		return nil, append(errs, fmt.Errorf("reconcile: %w", err))
	}
	defer unlockArts()
	bank := linkBanker{&artifacts.Store{Dir: r.arts.Dir, DeferSync: true}}
	inParallel(len(jobs), reconcileWorkers, func(i int) { r.prepareSettle(ctx, jobs[i], bank) })
	if err := r.arts.SyncFS(); err != nil {
		return nil, append(errs, fmt.Errorf("reconcile: %w", err))
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
		j.exit = r.orphanExit(j.rec, killed, j.exit.Streams)
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
