package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// settleRetryFor bounds how long a supervisor keeps retrying its terminal
// write when the database is busy or briefly unavailable, or the disk is
// full; the exit record covers a supervisor that dies or gives up meanwhile.
const settleRetryFor = 2 * time.Minute

// settleRetryFirst and settleRetryMax are the first and the longest pause
// between two settle attempts; the pause doubles in between.
const (
	settleRetryFirst = 50 * time.Millisecond
	settleRetryMax   = 2 * time.Second
)

// settle records the outcome: the exit record first (so a crash loses
// nothing), then the banked artifacts and the terminal transition in one
// transaction, then the job directory is removed in the background (Close
// of the runner and the end of a detached supervisor wait for it, as for
// the settle hook); an in-process supervisor empties it and keeps it as a
// spare for the next start instead (recycleJobDir).
//
// When that cannot be done yet (a full disk, a database busy or
// unavailable) the settle is pending: the exit record stays in the job
// directory, written as soon as there is room for it, so a reconciler
// settles the job from it if this supervisor dies or gives up; logs that
// could not be banked for want of space are banked on a later attempt
// rather than settled without them. Attempts wake on a timer and stop when
// ctx ends or settleRetryFor has passed.
func (s *supervisor) settle(ctx context.Context, out *outcome, streams map[bgcmd.Stream]*artifacts.Capture) {
	rec := &exitRecord{JobID: s.job.ID, State: out.state, ExitCode: out.exitCode, Signal: out.signal,
		Error: out.err, FinishedAt: s.now().UTC(), Detail: out.detail, Usage: out.usage,
		Streams: map[bgcmd.Stream]*artifacts.Summary{}}
	for st, c := range streams {
		sum := c.Summary()
		rec.Streams[st] = &sum
	}
	why := rec.Error // what the job itself said; notes about settling join it
	recorded, banked := false, false
	var after *jobstore.AfterSettle // what the settle's own transaction read
	attempt := func(ctx context.Context, last bool) (_ *jobstore.Record, err error) {
		var unrecorded error
		if !recorded {
			// While the settle is pending, the record on disk is what a
			// reconciler settles the job from: write it as soon as there
			// is room.
			rec.Error = why
			// Unsynced on this path: with synchronous=NORMAL the settle's
			// own commit survives a crash of this process and not a power
			// loss, and so does this file (see writeExitRecordUnsynced).
			unrecorded = writeExitRecordUnsynced(s.dir, rec)
			recorded = unrecorded == nil
		}
		var notes []string // what went wrong banking, said in the job's error
		defer func() {
			if err != nil && !last && !errors.Is(err, bgcmd.ErrInvalidTransition) {
				// Banking may have moved a log: the record on disk must
				// name what was banked, or a reconciler would find no
				// output.
				rec.Error = joinMsg(why, strings.Join(notes, "; "))
				recorded = writeExitRecord(s.dir, rec) == nil
			}
		}()
		unlock, err := s.arts.Lock(false)
		if err != nil {
			if !last && noSpace(err) {
				return nil, err
			}
			notes = append(notes, err.Error())
			unlock = func() {}
		}
		defer unlock()
		arts, err := bankStreams(ctx, s.store, s.arts, s.dir, rec)
		if err != nil {
			if !last && noSpace(err) {
				return nil, err // bank them once there is room: nothing discarded
			}
			notes = append(notes, err.Error())
		}
		banked = err == nil
		rec.Error = why
		if unrecorded != nil {
			rec.Error = joinMsg(rec.Error, "exit record not written: "+unrecorded.Error())
		}
		rec.Error = joinMsg(rec.Error, strings.Join(notes, "; "))
		p := settleParams(s.job.ID, rec, arts, 0)
		if s.beforeSettle != nil {
			s.beforeSettle()
		}
		got, peeked, err := s.store.SettleAndPeek(ctx, p)
		if err == nil {
			s.settledArts = p.Artifacts // the store gave them their ids
			after = &peeked
		}
		return got, err
	}
	got, err := retrySettle(ctx, attempt)
	if err == nil {
		// What the settle returned is what Await reports: no read after
		// the write.
		s.settled, s.settledCounters = got, &after.Counters
		// Told whatever happened to the logs: the settle is in the store.
		if s.hookless {
			notifyEvents(s.store)
		} else {
			afterSettle(s.store, s.arts, filepath.Dir(s.dir), s.job.ID, s.hookReaper(), s.hookRule)
		}
	}
	if err == nil && banked {
		// Off the settle path; Close and a detached supervisor's end wait.
		pendingHooks.Add(1)
		s.workers.goRun(func() {
			defer pendingHooks.Done()
			if s.reapers != nil {
				recycleJobDir(s.dir) // in process: kept for the next start
			} else {
				os.RemoveAll(s.dir)
			}
		})
	}
	// A slot is free and a dependency settled: start what is due.
	if after == nil || after.Queued {
		jobsDir := filepath.Dir(s.dir)
		_ = dispatch(ctx, s.store, jobsDir, holderGoneHere(jobsDir), func(id string) {
			afterSettle(s.store, s.arts, jobsDir, id, s.hookReaper(), s.hookRule)
		})
	}
}

// settleWithRetry writes the terminal transition, retrying transient
// failures. A job that has already settled is not an error to retry.
// expectSupervisor, when non-zero, makes the compare-and-set also require
// that supervisor pid (reconcile uses it).
func settleWithRetry(ctx context.Context, st *jobstore.Store, id string, rec *exitRecord, arts []bgcmd.Artifact, expectSupervisor int) (*jobstore.Record, error) {
	return retrySettle(ctx, func(ctx context.Context, _ bool) (*jobstore.Record, error) {
		return st.Settle(ctx, settleParams(id, rec, arts, expectSupervisor))
	})
}

// settleParams is the terminal transition an exit record describes.
func settleParams(id string, rec *exitRecord, arts []bgcmd.Artifact, expectSupervisor int) jobstore.SettleParams {
	p := jobstore.SettleParams{ID: id, To: rec.State, ExitCode: rec.ExitCode, Signal: rec.Signal,
		Error: rec.Error, FinishedAt: rec.FinishedAt, Detail: rec.Detail,
		Artifacts: make([]bgcmd.Artifact, len(arts)), ExpectSupervisorPID: expectSupervisor, Usage: rec.Usage}
	copy(p.Artifacts, arts) // the store fills in ids: every attempt starts clean
	return p
}

// retrySettle runs attempt until it succeeds or fails for good (the job
// has already settled, or is unknown). Between attempts it waits on a
// timer, doubling the pause up to settleRetryMax; it stops with ctx's error
// (joined to the last failure) when ctx ends, and returns the last failure
// once settleRetryFor has passed. The attempt made once that time is up is
// told it is the last, so it settles with what it has.
func retrySettle(ctx context.Context, attempt func(ctx context.Context, last bool) (*jobstore.Record, error)) (*jobstore.Record, error) {
	deadline := time.Now().Add(settleRetryFor)
	pause := settleRetryFirst
	for {
		last := !time.Now().Before(deadline)
		out, err := attempt(ctx, last)
		if err == nil || errors.Is(err, bgcmd.ErrInvalidTransition) || errors.Is(err, bgcmd.ErrNotFound) || last {
			return out, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("settle pending, given up: %w", errors.Join(context.Cause(ctx), err))
		}
		timer := time.NewTimer(min(pause, time.Until(deadline)))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("settle pending, given up: %w", errors.Join(context.Cause(ctx), err))
		case <-timer.C:
		}
		pause = min(pause*2, settleRetryMax)
	}
}

// noSpace reports whether err says the disk (or the owner's quota) is full:
// a failure that passes once space is freed.
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// bankStreams banks both logs of a job directory as artifacts. A log that is
// already banked (its file gone, its summary in the exit record) is found by
// its hash.
func bankStreams(ctx context.Context, db *jobstore.Store, store banker, dir string, rec *exitRecord) ([]bgcmd.Artifact, error) {
	var out []bgcmd.Artifact
	var errs []error
	if rec.Streams == nil {
		rec.Streams = map[bgcmd.Stream]*artifacts.Summary{}
	}
	for _, st := range []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr} {
		logPath := filepath.Join(dir, string(st)+".log")
		sum := rec.Streams[st]
		if sum == nil {
			if _, err := os.Stat(logPath); errors.Is(err, os.ErrNotExist) {
				sum = &artifacts.Summary{SHA256: artifacts.EmptySHA256} // never written
			}
		}
		// Bank finds an artifact banked before by its hash, banks an empty
		// stream that never made a log, and scans a log without a summary.
		banked, _, err := store.Bank(logPath, sum)
		if err != nil {
			errs = append(errs, fmt.Errorf("bank %s: %w", st, err))
			continue
		}
		rec.Streams[st] = &banked
		if err := shareArtifact(ctx, db, store, banked); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", st, err))
		}
		out = append(out, bgcmd.Artifact{Stream: st, SHA256: banked.SHA256, Bytes: banked.Bytes,
			Chars: banked.Chars, Lines: banked.Lines, Capped: banked.Capped})
	}
	return out, errors.Join(errs...)
}

func joinMsg(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "; " + b
}
