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
// got until a page comes back short.
func (s *Store) EventsAfter(ctx context.Context, p EventsParams) ([]FeedEvent, error) {
	limit := p.Limit
	switch {
	case limit == 0:
		limit = 100
	case limit < 0 || limit > MaxEventsLimit:
		return nil, fmt.Errorf("job events: limit %d out of range 1..%d", limit, MaxEventsLimit)
	}
	where := []string{"e.seq > ?"}
	args := []any{p.After}
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
	q, args, err := sqlx.In(`SELECT e.seq, e.job_id, COALESCE(e.from_state, '') AS from_state,
		e.to_state, e.at, e.detail, j.session, j.exit_code, j.signal
		FROM job_events e JOIN jobs j ON j.id = e.job_id
		WHERE `+strings.Join(where, " AND ")+` ORDER BY e.seq LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("job events after %d: %w", p.After, err)
	}
	var rows []struct {
		eventRow
		Session  string        `db:"session"`
		ExitCode sql.NullInt64 `db:"exit_code"`
		Signal   string        `db:"signal"`
	}
	if err := s.r.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, fmt.Errorf("job events after %d: %w", p.After, err)
	}
	var out []FeedEvent
	for _, r := range rows {
		ev, err := r.event()
		if err != nil {
			return nil, err
		}
		e := FeedEvent{Event: ev, Session: r.Session}
		if e.To.Settled() {
			e.Signal = r.Signal
			e.ExitCode = intOrNil(r.ExitCode)
		}
		out = append(out, e)
	}
	return out, nil
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
