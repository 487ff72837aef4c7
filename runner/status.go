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
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// Status returns the job's status with its tail preview and the session's
// counters. It only reads: a settled job stays unread (see Read). Unknown
// ids wrap bgcmd.ErrNotFound.
func (r *Runner) Status(ctx context.Context, id string) (*bgcmd.Status, error) {
	rec, err := r.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return r.status(ctx, rec, false)
}

// Read is Status for a reader who takes in the result: a settled job is
// marked read first (it leaves the session's finished counter), so the
// returned counters already leave it out. A running job is not marked.
// Unknown ids wrap bgcmd.ErrNotFound.
func (r *Runner) Read(ctx context.Context, id string) (*bgcmd.Status, error) {
	rec, err := r.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return r.status(ctx, rec, true)
}

// MarkRead marks a settled job read, clearing it from its session's
// finished counter, and reports whether this call did (exactly one caller
// does). A running or already-read job is left alone. Unknown ids wrap
// bgcmd.ErrNotFound.
func (r *Runner) MarkRead(ctx context.Context, id string) (bool, error) {
	return r.store.MarkSeen(ctx, id)
}

// Job returns the job's stored record, without marking it read. Unknown
// ids wrap bgcmd.ErrNotFound.
func (r *Runner) Job(ctx context.Context, id string) (*jobstore.Record, error) {
	return r.store.Get(ctx, id)
}

// List returns one page of job records matching p, newest first (see
// jobstore.ListParams). It marks nothing read.
func (r *Runner) List(ctx context.Context, p jobstore.ListParams) (*jobstore.ListResult, error) {
	return r.store.List(ctx, p)
}

// Counters returns the session's running and finished (settled, unread)
// job counts.
func (r *Runner) Counters(ctx context.Context, session string) (bgcmd.Counters, error) {
	if session == "" {
		session = r.session
	}
	return r.store.Counters(ctx, session)
}

func (r *Runner) status(ctx context.Context, rec *jobstore.Record, markSeen bool) (*bgcmd.Status, error) {
	return r.statusOf(ctx, rec, markSeen, nil, nil)
}

// statusOf is status with the settled job's artifacts when the caller has
// them (arts non-nil; nil reads them from the store), and its session's
// counters when the job's settle read them in its own transaction
// (counters non-nil, as the settle left them; nil, or a read that marks
// the job seen, reads them now).
func (r *Runner) statusOf(ctx context.Context, rec *jobstore.Record, markSeen bool, arts []bgcmd.Artifact, counters *bgcmd.Counters) (*bgcmd.Status, error) {
	j := &rec.Job
	s := &bgcmd.Status{
		ID: j.ID, Session: j.Session, Host: j.Host, HostID: j.HostID, Argv: j.Argv, Exe: j.Exe, ExeSHA256: j.ExeSHA256, Cwd: j.Cwd, State: j.State,
		ExitCode: j.ExitCode, Signal: j.Signal, Error: j.Error, PID: j.PID, PGID: j.PGID,
		SupervisorPID: j.SupervisorPID, Detached: j.Detached, Labels: j.Labels,
		CreatedAt: j.CreatedAt, StartedAt: j.StartedAt, FinishedAt: j.FinishedAt,
		DurationMS: j.Duration(r.now()).Milliseconds(),
		Usage:      j.Usage,
		Limits:     j.ResourceLimits,
		Group:      j.Group, After: j.After, RerunOf: j.RerunOf,
	}
	if j.State == bgcmd.StateQueued {
		if pos, err := r.store.QueuePositions(ctx); err == nil {
			s.QueuePosition = pos[j.ID]
		}
	}
	var sources [2]artifacts.Source
	if j.State.Settled() {
		if arts == nil {
			var err error
			if arts, err = r.store.Artifacts(ctx, j.ID); err != nil {
				return nil, err
			}
		}
		for _, a := range arts {
			ss := bgcmd.StreamStatus{Bytes: a.Bytes, SHA256: a.SHA256, ArtifactID: a.ID, Capped: a.Capped}
			src, _ := r.artifactSource(ctx, rec, a) // no preview rather than no status
			if a.Stream == bgcmd.Stdout {
				s.Stdout, sources[0] = ss, src
			} else {
				s.Stderr, sources[1] = ss, src
			}
		}
		if markSeen && j.SeenAt == nil { // a job read before needs no write
			if _, err := r.store.MarkSeen(ctx, j.ID); err != nil {
				return nil, err
			}
		}
	} else if !r.ownJob(rec) {
		// Its live logs are on its host's disk: show what its supervisor
		// published (a store that shares artifacts).
		if rec.Live != nil {
			s.Stdout.Bytes, s.Stderr.Bytes = rec.Live.StdoutBytes, rec.Live.StderrBytes
			s.TailPreview = rec.Live.Tail
		}
	} else {
		for i, st := range []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr} {
			sources[i] = r.liveSource(j.ID, st)
			if fi, err := os.Stat(sources[i].Path); err == nil {
				if st == bgcmd.Stdout {
					s.Stdout.Bytes = fi.Size()
				} else {
					s.Stderr.Bytes = fi.Size()
				}
			}
		}
	}
	if s.TailPreview == "" {
		s.TailPreview = preview(sources)
	}
	if counters != nil && !(markSeen && j.SeenAt == nil) {
		s.Counters = *counters
		return s, nil
	}
	c, err := r.store.Counters(ctx, j.Session)
	if err != nil {
		return nil, err
	}
	s.Counters = c
	return s, nil
}

// preview is the last MaxPreviewChars characters of the output: stdout's
// tail, then stderr's when it has any, each shortened to fit.
func preview(sources [2]artifacts.Source) string {
	var parts [2]string
	for i, src := range sources {
		if src.Path == "" {
			continue
		}
		p, err := artifacts.Preview(src, bgcmd.MaxPreviewChars)
		if err == nil {
			parts[i] = p
		}
	}
	if parts[1] == "" {
		return parts[0]
	}
	if parts[0] == "" {
		return parts[1]
	}
	half := bgcmd.MaxPreviewChars / 2
	out, errText := []rune(parts[0]), []rune(parts[1])
	switch {
	case len(out)+len(errText)+len("\n[stderr]\n") <= bgcmd.MaxPreviewChars:
	case len(errText) < half:
		out = out[len(out)-(bgcmd.MaxPreviewChars-len(errText)-len("\n[stderr]\n")):]
	case len(out) < half:
		errText = errText[len(errText)-(bgcmd.MaxPreviewChars-len(out)-len("\n[stderr]\n")):]
	default:
		keep := half - len("\n[stderr]\n")
		out = out[len(out)-keep:]
		errText = errText[len(errText)-half:]
	}
	return string(out) + "\n[stderr]\n" + string(errText)
}

func (r *Runner) liveSource(id string, st bgcmd.Stream) artifacts.Source {
	p := filepath.Join(r.jobDir(id), string(st)+".log")
	return artifacts.Source{Path: p, IndexPath: p + ".idx"}
}

// artifactSource is a banked artifact's source on this host: one banked
// on another host is fetched from the store first (localArtifact) and one
// that is not there is an error saying so.
func (r *Runner) artifactSource(ctx context.Context, rec *jobstore.Record, a bgcmd.Artifact) (artifacts.Source, error) {
	p, err := r.localArtifact(ctx, a)
	if err != nil && r.ownJob(rec) && errors.Is(err, os.ErrNotExist) {
		// Banked here and gone: the reader names the missing file.
		p, err = r.arts.Path(a.SHA256), nil
	}
	if err != nil {
		return artifacts.Source{}, err
	}
	return artifacts.Source{Path: p, IndexPath: p + ".idx", Final: true, Size: a.Bytes, HasSize: true}, nil
}

// Await returns the job's status once it has settled, or its current status
// when maxWait elapses: the wait is bounded, never the command, and an
// elapsed wait is not an error. It only reads: a caller that takes in the
// settled result calls Read after it. It notices a settle made by another process
// through a watch on the job's directory, not by polling the database.
func (r *Runner) Await(ctx context.Context, id string, maxWait time.Duration) (*bgcmd.Status, error) {
	timer := time.NewTimer(maxWait)
	defer timer.Stop()
	var watch *dirWatch
	reread := false
	defer func() {
		if watch != nil {
			watch.Close()
		}
	}()
	if sup := r.liveSupervisor(id); sup != nil {
		// Supervised here: its settle hands over the settled row, so
		// there is nothing to read before or after.
		select {
		case <-sup.done:
			if sup.settled != nil {
				return r.statusOf(ctx, sup.settled, false, sup.settledArts, sup.settledCounters)
			}
		case <-timer.C:
			return r.Status(ctx, id)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// Another host's job on PostgreSQL: its settle's NOTIFY wakes the wait.
	var notices <-chan struct{}
	for {
		rec, err := r.store.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if rec.State.Settled() {
			return r.status(ctx, rec, false)
		}
		if rec.State == bgcmd.StateQueued {
			_ = r.Dispatch(ctx) // whatever is due starts, this job perhaps
		}
		var wake <-chan struct{}
		if sup := r.liveSupervisor(id); sup != nil {
			wake = sup.done
		} else if !r.supervisorAlive(rec) {
			// Nobody will settle it: do it now, as reconcile would.
			if _, err := r.reconcileJob(ctx, rec); err != nil {
				return nil, err
			}
			continue
		} else if !r.ownJob(rec) {
			if notices == nil {
				var unwatch func()
				if notices, unwatch = r.store.WatchEvents(); notices != nil {
					defer unwatch()
					continue // re-read: the settle may have landed before the watch
				}
			}
			wake = notices
		} else {
			if watch == nil {
				w, err := watchDir(r.jobDir(id))
				if err == nil {
					watch = w
					continue // re-read: the settle may have landed before the watch
				}
				if !reread {
					// The directory is gone or was never here: the
					// settle may have landed (an in-process supervisor
					// that just ended), so read once more before waiting.
					reread = true
					continue
				}
			}
			if watch != nil {
				wake = watch.C
			}
		}
		select {
		case <-wake:
		case <-time.After(time.Second): // a safety net under the watch
		case <-timer.C:
			return r.status(ctx, rec, false)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ReadOutput returns one page of a job's stdout or stderr, from the live log
// while the job runs and from the banked artifact after; the same bytes give
// the same answers.
func (r *Runner) ReadOutput(ctx context.Context, id string, stream bgcmd.Stream, page artifacts.Page) (*artifacts.Result, error) {
	if !stream.Valid() {
		return nil, fmt.Errorf("read output: unknown stream %q (stdout or stderr)", stream)
	}
	for attempt := 0; ; attempt++ {
		src, err := r.Source(ctx, id, stream)
		if err != nil {
			return nil, err
		}
		res, err := artifacts.Read(src, page)
		if err != nil && !src.Final && errors.Is(err, os.ErrNotExist) && attempt == 0 {
			continue // the job settled and its log moved to the artifact store
		}
		if err != nil {
			return nil, fmt.Errorf("read %s of job %s: %w", stream, id, err)
		}
		return res, nil
	}
}

// Source locates a job stream's bytes: the live log while the job runs, the
// banked artifact after.
func (r *Runner) Source(ctx context.Context, id string, stream bgcmd.Stream) (artifacts.Source, error) {
	rec, err := r.store.Get(ctx, id)
	if err != nil {
		return artifacts.Source{}, err
	}
	if !rec.State.Settled() {
		if !r.ownJob(rec) {
			return artifacts.Source{}, elsewhere(rec)
		}
		return r.liveSource(id, stream), nil
	}
	arts, err := r.store.Artifacts(ctx, id)
	if err != nil {
		return artifacts.Source{}, err
	}
	for _, a := range arts {
		if a.Stream == stream {
			if !artifacts.ValidSHA256(a.SHA256) {
				return artifacts.Source{}, fmt.Errorf("job %s: its %s record names a malformed sha256 %q (the store was edited by hand?): nothing is served; bgcmd verify %s reports it",
					id, stream, a.SHA256, id)
			}
			src, err := r.artifactSource(ctx, rec, a)
			if err != nil {
				return artifacts.Source{}, fmt.Errorf("job %s: %s: %w", id, stream, err)
			}
			return src, nil
		}
	}
	return artifacts.Source{}, fmt.Errorf("job %s settled as %s with no banked %s (%s): nothing to read", id, rec.State, stream, rec.Error)
}
