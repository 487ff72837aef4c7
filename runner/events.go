//go:build linux

package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// EventsTickName is the file beside the database that every process
// writing a job transition touches after its commit: watchers of the event
// feed wait on it with inotify, so an idle watcher costs nothing. The file
// carries no data; the job_events rows are the truth, read after every
// wake, so a missed or coalesced wake loses nothing.
const EventsTickName = "events.tick"

// eventSafetyNet is how often a watcher reads the feed without a wake: the
// net under inotify (unavailable, or the tick file replaced) and, on
// PostgreSQL, under NOTIFY (a notice lost while the listener reconnects).
const eventSafetyNet = 5 * time.Second

// EventFilter chooses the events of Runner.Events. Zero values mean "no
// filter".
type EventFilter struct {
	// Session keeps one session's events.
	Session string
	// JobIDs keeps these jobs' events.
	JobIDs []string
	// After is the resume point: events with a larger seq are delivered.
	// 0 delivers every event still in the store; a negative value starts
	// from now (after the newest event when Events is called).
	After int64
	// Settled keeps only terminal transitions.
	Settled bool
}

// tickPath is the tick file of the store's database ("" without one).
func tickPath(st *jobstore.Store) string { return besideDB(st, EventsTickName) }

// besideDB is the file name in the folder of st's database, or "" for a
// store without a path (PostgreSQL opened without Options.Path): nothing
// of bgcmd's may land in whatever the working directory is, and such a
// store's notices travel by NOTIFY.
func besideDB(st *jobstore.Store, name string) string {
	if st.Path() == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(st.Path()), name)
}

// notifyEvents touches the store's tick file after a committed transition:
// opening it for writing and closing it wakes every watcher. It is best
// effort: watchers also read the feed on a timer.
func notifyEvents(st *jobstore.Store) { touch(tickPath(st)) }

// touch opens the file at path for writing, creating it, and closes it:
// what wakes the watchers of a tick file. "" and failures do nothing.
func touch(path string) {
	if path == "" {
		return
	}
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0o600)
	if err == nil {
		unix.Close(fd)
	}
}

// watchTick watches the tick file, creating it (read-only, so watchers are
// not woken) when missing. It returns the watch and the file's inode.
func watchTick(path string) (*dirWatch, uint64, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("watch %s: %w", path, err)
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	unix.Close(fd)
	if err != nil {
		return nil, 0, fmt.Errorf("watch %s: %w", path, err)
	}
	w, err := newDirWatch(path, unix.IN_CLOSE_WRITE|unix.IN_ATTRIB|unix.IN_DELETE_SELF|
		unix.IN_MOVE_SELF|unix.IN_DONT_FOLLOW)
	if err != nil {
		return nil, 0, err
	}
	return w, st.Ino, nil
}

// eventFeed reads job_events after a seq, waking on the tick file and, on
// PostgreSQL, on the store's notice of a transition committed by any host.
type eventFeed struct {
	st   *jobstore.Store
	p    jobstore.EventsParams
	path string
	w    *dirWatch
	ino  uint64
	// notices wakes on a transition's NOTIFY (nil on SQLite); unwatch
	// ends that watch.
	notices <-chan struct{}
	unwatch func()
	// net is the safety-net period (eventSafetyNet unless set).
	net time.Duration
}

// newEventFeed starts watching before anything is read, so no event
// committed after the caller's first read can go unnoticed.
func (r *Runner) newEventFeed(p jobstore.EventsParams) *eventFeed {
	f := &eventFeed{st: r.store, p: p, path: tickPath(r.store), net: cmp.Or(r.eventNet, eventSafetyNet)}
	f.notices, f.unwatch = r.store.WatchEvents()
	f.rewatch()
	return f
}

// rewatch (re)starts the watch when there is none or the tick file was
// replaced. Without inotify the feed runs on the safety-net timer alone.
func (f *eventFeed) rewatch() {
	if f.w != nil {
		var st syscall.Stat_t
		if err := syscall.Stat(f.path, &st); err == nil && st.Ino == f.ino {
			return
		}
		f.w.Close()
		f.w = nil
	}
	if w, ino, err := watchTick(f.path); err == nil {
		f.w, f.ino = w, ino
	}
}

// poll returns the next page of events and advances the resume point,
// past the events that did not match too.
func (f *eventFeed) poll(ctx context.Context) ([]jobstore.FeedEvent, error) {
	evs, next, err := f.st.EventsPage(ctx, f.p)
	if err != nil {
		return nil, err
	}
	f.p.After = next
	return evs, nil
}

// wait blocks until the tick file is touched, the safety net fires
// (reported as timedOut), or ctx or stop end.
func (f *eventFeed) wait(ctx context.Context, stop <-chan time.Time) (timedOut bool, err error) {
	var wake chan struct{}
	if f.w != nil {
		wake = f.w.C
	}
	net := time.NewTimer(f.net)
	defer net.Stop()
	select {
	case <-f.notices:
		return false, nil
	case _, ok := <-wake:
		if !ok {
			f.w.Close()
			f.w = nil
		}
		return false, nil
	case <-net.C:
		f.rewatch()
		return true, nil
	case <-stop:
		return false, errWaitElapsed
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

func (f *eventFeed) close() {
	f.unwatch()
	if f.w != nil {
		f.w.Close()
	}
}

// errWaitElapsed ends a bounded wait.
var errWaitElapsed = errors.New("wait elapsed")

// Events delivers job transitions matching filter as they are committed,
// by any process sharing the store (detached supervisors, other hosts'
// runners, reconcile), oldest first, starting after filter.After. The
// channel is closed when ctx ends. A consumer that records the Seq of each
// event it handled resumes after it, across restarts, without gaps.
// Events waits on the store's tick file (see EventsTickName) and, on
// PostgreSQL, on the NOTIFY every transition sends to the hosts sharing
// the database, not by polling; a failed read is retried on the
// safety-net timer.
func (r *Runner) Events(ctx context.Context, filter EventFilter) (<-chan bgcmd.Event, error) {
	p := jobstore.EventsParams{After: filter.After, Session: filter.Session,
		JobIDs: slices.Clone(filter.JobIDs), Settled: filter.Settled, Limit: 500}
	feed := r.newEventFeed(p)
	if filter.After < 0 {
		latest, err := r.store.LatestEventSeq(ctx)
		if err != nil {
			feed.close()
			return nil, fmt.Errorf("events: %w", err)
		}
		feed.p.After = latest
	}
	out := make(chan bgcmd.Event, 64)
	go func() {
		defer close(out)
		defer feed.close()
		for {
			evs, err := feed.poll(ctx)
			for _, e := range evs {
				select {
				case out <- domainEvent(e):
				case <-ctx.Done():
					return
				}
			}
			if err == nil && len(evs) == feed.p.Limit {
				continue
			}
			if _, err := feed.wait(ctx, nil); err != nil {
				return
			}
		}
	}()
	return out, nil
}

func domainEvent(e jobstore.FeedEvent) bgcmd.Event {
	return bgcmd.Event{Seq: e.Seq, JobID: e.JobID, Session: e.Session, From: e.From, To: e.To,
		Time: e.At, ExitCode: e.ExitCode, Signal: e.Signal}
}

// AwaitAny waits until the first of the jobs ids settles and returns its
// status. It only reads: a caller that takes in the result calls Read
// after it. A job that had already settled when AwaitAny
// was called counts: the earliest finished of those is returned at once.
// When maxWait elapses first, the first id's current status is returned
// (still running), not an error: the wait is bounded, never the commands.
// A job whose supervisor died is settled by reconcile, as Await does.
// Unknown ids wrap bgcmd.ErrNotFound.
func (r *Runner) AwaitAny(ctx context.Context, ids []string, maxWait time.Duration) (*bgcmd.Status, error) {
	if len(ids) == 0 {
		return nil, errors.New("await any: no job ids (give at least one)")
	}
	timer := time.NewTimer(maxWait)
	defer timer.Stop()
	feed := r.newEventFeed(jobstore.EventsParams{JobIDs: slices.Clone(ids), Settled: true, Limit: 1})
	defer feed.close()
	var err error
	if feed.p.After, err = r.store.LatestEventSeq(ctx); err != nil {
		return nil, fmt.Errorf("await any: %w", err)
	}
	check := true // read every job: at the start and on each safety-net wake
	for {
		if check {
			rec, first, err := r.firstSettled(ctx, ids)
			if err != nil {
				return nil, err
			}
			if rec != nil {
				return r.status(ctx, rec, false)
			}
			select {
			case <-timer.C:
				return r.status(ctx, first, false)
			default:
			}
		}
		evs, err := feed.poll(ctx)
		if err != nil {
			return nil, fmt.Errorf("await any: %w", err)
		}
		if len(evs) > 0 {
			rec, err := r.store.Get(ctx, evs[0].JobID)
			if err != nil {
				return nil, err
			}
			return r.status(ctx, rec, false)
		}
		check, err = feed.wait(ctx, timer.C)
		if errors.Is(err, errWaitElapsed) {
			rec, err := r.store.Get(ctx, ids[0])
			if err != nil {
				return nil, err
			}
			return r.status(ctx, rec, false)
		}
		if err != nil {
			return nil, err
		}
	}
}

// firstSettled reads each job, settles those whose supervisor died (as
// reconcile would) and returns the earliest finished settled one, if any,
// and the first job as it is.
func (r *Runner) firstSettled(ctx context.Context, ids []string) (settled, first *jobstore.Record, err error) {
	for i, id := range ids {
		rec, err := r.store.Get(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		if !rec.State.Settled() && r.liveSupervisor(id) == nil && !r.supervisorAlive(rec) {
			if _, err := r.reconcileJob(ctx, rec); err != nil {
				return nil, nil, err
			}
			if rec, err = r.store.Get(ctx, id); err != nil {
				return nil, nil, err
			}
		}
		if i == 0 {
			first = rec
		}
		if rec.State.Settled() && (settled == nil || rec.FinishedAt.Before(*settled.FinishedAt)) {
			settled = rec
		}
	}
	return settled, first, nil
}
