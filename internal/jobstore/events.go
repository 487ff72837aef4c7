package jobstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
)

// MaxEventsLimit bounds one page of EventsAfter.
const MaxEventsLimit = 1000

// EventsParams filter and page EventsAfter. Zero values mean "no filter".
type EventsParams struct {
	// After is the resume point: only events with a larger seq are
	// returned. seq is never reused (AUTOINCREMENT), so a consumer that
	// remembers the last seq it handled resumes without gaps or repeats.
	After int64
	// Session keeps one session's events.
	Session string
	// JobIDs keeps these jobs' events.
	JobIDs []string
	// Settled keeps only terminal transitions (to a settled state).
	Settled bool
	// Limit is the page size: 0 means 100; above MaxEventsLimit is an error.
	Limit int
}

// FeedEvent is one job_events row with the facts a consumer of the feed
// needs beside it: the job's session and, for a terminal transition, its
// exit code and signal.
type FeedEvent struct {
	Event
	Session  string
	ExitCode *int
	Signal   string
}

// EventsAfter returns the events with seq > p.After that match p, oldest
// first, at most one page. A consumer calls it again with the last seq it
// got until a page comes back short. A consumer that polls with a filter
// (a session, settled only) resumes after EventsPage's next instead, and
// does not read the events that did not match again.
func (s *Store) EventsAfter(ctx context.Context, p EventsParams) ([]FeedEvent, error) {
	evs, _, err := s.EventsPage(ctx, p)
	return evs, err
}

// eventsScanFirst is the widest range of new events a filtered page reads
// event by event (SQLite): a feed that polls as transitions commit has a
// few new ones, and looks each up, whatever the number of jobs in its
// session. A wider range (a consumer catching up) is read through the
// filter's index instead.
const eventsScanFirst = 4096

// EventsPage returns one page of EventsAfter and next, the seq to resume
// after: the last event's when the page is full, else the newest event of
// the store when the page was read, every event up to it having been
// looked at. Transitions commit in seq order (every write transaction
// holds the store's write lock; see lockWriter), so no event at or below
// next can appear later.
func (s *Store) EventsPage(ctx context.Context, p EventsParams) (evs []FeedEvent, next int64, err error) {
	limit := p.Limit
	switch {
	case limit == 0:
		limit = 100
	case limit < 0 || limit > MaxEventsLimit:
		return nil, p.After, fmt.Errorf("job events: limit %d out of range 1..%d", limit, MaxEventsLimit)
	}
	newest, err := s.LatestEventSeq(ctx)
	if err != nil {
		return nil, p.After, fmt.Errorf("job events after %d: %w", p.After, err)
	}
	if newest <= p.After {
		return nil, p.After, nil
	}
	if testHookEventsNewest != nil {
		testHookEventsNewest()
	}
	q, args, err := s.eventsQuery(p, newest, limit)
	if err != nil {
		return nil, p.After, fmt.Errorf("job events after %d: %w", p.After, err)
	}
	var rows []struct {
		eventRow
		Session  string        `db:"session"`
		ExitCode sql.NullInt64 `db:"exit_code"`
		Signal   string        `db:"signal"`
	}
	if err := s.r.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, p.After, fmt.Errorf("job events after %d: %w", p.After, err)
	}
	for _, r := range rows {
		ev, err := r.event()
		if err != nil {
			return nil, p.After, err
		}
		e := FeedEvent{Event: ev, Session: r.Session}
		if e.To.Settled() {
			e.Signal = r.Signal
			e.ExitCode = intOrNil(r.ExitCode)
		}
		evs = append(evs, e)
	}
	if len(evs) == limit {
		return evs, evs[len(evs)-1].Seq, nil
	}
	return evs, newest, nil
}

// testHookEventsNewest, set by a test, runs between EventsPage's read of
// the newest event and its page.
var testHookEventsNewest func()

// eventsQuery is the page of events after p.After up to newest that match
// p. A job's events are found through its jobs; otherwise a narrow range
// is read event by event (eventsScanFirst), a wide one as the planner
// chooses.
func (s *Store) eventsQuery(p EventsParams, newest int64, limit int) (string, []any, error) {
	where := []string{"e.seq > ?", "e.seq <= ?"}
	args := []any{p.After, newest}
	if p.Session != "" {
		where = append(where, "j.session = ?")
		args = append(args, p.Session)
	}
	if len(p.JobIDs) > 0 {
		where = append(where, "e.job_id IN (?)")
		args = append(args, p.JobIDs)
	}
	if p.Settled {
		where = append(where, "e.to_state NOT IN ('running', 'queued')")
	}
	args = append(args, limit)
	join := "JOIN"
	if len(p.JobIDs) == 0 && newest-p.After <= eventsScanFirst {
		join = s.d.eventsFirstJoin()
	}
	return sqlx.In(`SELECT e.seq, e.job_id, COALESCE(e.from_state, '') AS from_state,
		e.to_state, e.at, e.detail, j.session, j.exit_code, j.signal
		FROM job_events e `+join+` jobs j ON j.id = e.job_id
		WHERE `+strings.Join(where, " AND ")+` ORDER BY e.seq LIMIT ?`, args...)
}

// LatestEventSeq returns the seq of the newest event (0 when there is
// none): a consumer that wants only what happens from now on starts
// after it.
func (s *Store) LatestEventSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.r.GetContext(ctx, &seq, `SELECT COALESCE(MAX(seq), 0) FROM job_events`); err != nil {
		return 0, fmt.Errorf("latest job event: %w", err)
	}
	return seq, nil
}
