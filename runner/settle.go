package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/jobstore"
)

// settleRetryFor bounds how long a supervisor keeps retrying its terminal
// write when the database is busy or briefly unavailable; the exit record
// covers a supervisor that dies meanwhile.
const settleRetryFor = 2 * time.Minute

// settle records the outcome: the exit record first (so a crash loses
// nothing), then the banked artifacts and the terminal transition in one
// transaction, then the job directory is removed in the background (Close
// of the runner and the end of a detached supervisor wait for it, as for
// the settle hook).
func (s *supervisor) settle(ctx context.Context, out *outcome, streams map[bgcmd.Stream]*artifacts.Capture) {
	rec := &exitRecord{State: out.state, ExitCode: out.exitCode, Signal: out.signal,
		Error: out.err, FinishedAt: s.now().UTC(), Detail: out.detail, Usage: out.usage,
		Streams: map[bgcmd.Stream]*artifacts.Summary{}}
	for st, c := range streams {
		sum := c.Summary()
		rec.Streams[st] = &sum
	}
	if err := writeExitRecordUnsynced(s.dir, rec); err != nil {
		rec.Error = joinMsg(rec.Error, "exit record not written: "+err.Error())
	}
	unlock, err := lockArtifacts(s.arts, false)
	if err != nil {
		rec.Error = joinMsg(rec.Error, err.Error())
		unlock = func() {}
	}
	arts, err := bankStreams(s.arts, s.dir, rec)
	if err != nil {
		rec.Error = joinMsg(rec.Error, err.Error())
	}
	_, err = settleWithRetry(ctx, s.store, s.job.ID, rec, arts, 0)
	unlock()
	if err == nil {
		afterSettle(s.store, s.arts, filepath.Dir(s.dir), s.job.ID)
		pendingHooks.Add(1)
		go func() {
			defer pendingHooks.Done()
			os.RemoveAll(s.dir)
		}()
	}
}

// settleWithRetry writes the terminal transition, retrying transient
// failures. A job that has already settled is not an error to retry.
// expectSupervisor, when non-zero, makes the compare-and-set also require
// that supervisor pid (reconcile uses it).
func settleWithRetry(ctx context.Context, st *jobstore.Store, id string, rec *exitRecord, arts []bgcmd.Artifact, expectSupervisor int) (*jobstore.Record, error) {
	p := jobstore.SettleParams{ID: id, To: rec.State, ExitCode: rec.ExitCode, Signal: rec.Signal,
		Error: rec.Error, FinishedAt: rec.FinishedAt, Detail: rec.Detail, Artifacts: arts,
		ExpectSupervisorPID: expectSupervisor, Usage: rec.Usage}
	deadline := time.Now().Add(settleRetryFor)
	backoff := 50 * time.Millisecond
	for {
		out, err := st.Settle(ctx, p)
		if err == nil || errors.Is(err, bgcmd.ErrInvalidTransition) || errors.Is(err, bgcmd.ErrNotFound) ||
			time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(backoff) // a retry pause, not a synchronisation
		backoff = min(backoff*2, 2*time.Second)
		for i := range p.Artifacts {
			p.Artifacts[i].ID = ""
		}
	}
}

// bankStreams banks both logs of a job directory as artifacts. A log that is
// already banked (its file gone, its summary in the exit record) is found by
// its hash.
func bankStreams(store *artifacts.Store, dir string, rec *exitRecord) ([]bgcmd.Artifact, error) {
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
				sum = &artifacts.Summary{SHA256: emptySHA256} // never written
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
		out = append(out, bgcmd.Artifact{Stream: st, SHA256: banked.SHA256, Bytes: banked.Bytes,
			Chars: banked.Chars, Lines: banked.Lines, Capped: banked.Capped})
	}
	return out, errors.Join(errs...)
}

func joinMsg(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
