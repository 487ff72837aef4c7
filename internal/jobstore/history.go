package jobstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/bgcmd/bgcmd"
)

// MaxListLimit bounds one page of List.
const MaxListLimit = 1000

// ListParams filter and page List. Zero values mean "no filter".
type ListParams struct {
	// States keeps jobs in any of these states.
	States []bgcmd.State
	// Session keeps one session's jobs.
	Session string
	// Since and Until bound created_at (inclusive, exclusive).
	Since, Until time.Time
	// Exe keeps jobs whose resolved executable is exactly this path.
	Exe string
	// Unread keeps settled jobs not yet read.
	Unread bool
	// Host keeps the jobs of one host, named by its host id or its
	// hostname (every host with that hostname).
	Host string
	// Limit is the page size: 0 means 50; above MaxListLimit is an error.
	Limit int
	// Before is the keyset cursor: the NextBefore of the previous page.
	Before string
}

// ListResult is one page of jobs, newest first.
type ListResult struct {
	Jobs []*Record
	// NextBefore is the cursor for the next (older) page; "" when this page
	// is the last.
	NextBefore string
}

// List returns jobs matching p, newest first, one keyset page at a time.
// Ids are time-ordered, so the cursor is the last id of the page.
func (s *Store) List(ctx context.Context, p ListParams) (*ListResult, error) {
	limit := p.Limit
	switch {
	case limit == 0:
		limit = 50
	case limit < 0 || limit > MaxListLimit:
		return nil, fmt.Errorf("list jobs: limit %d out of range 1..%d", limit, MaxListLimit)
	}
	where, args, err := listWhere(p)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	if err := s.landAnnounced(ctx, ""); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	res, err := s.selectJobs(ctx, where, args, limit)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return res, nil
}

// selectJobs returns the newest limit jobs matching every condition of
// where (args hold their values; a slice stands for the list of an
// "IN (?)"), with the resume point of the following page.
func (s *Store) selectJobs(ctx context.Context, where []string, args []any, limit int) (*ListResult, error) {
	q := `SELECT ` + jobColumns + ` FROM jobs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q, args, err := sqlx.In(q+" ORDER BY id DESC LIMIT ?", append(args, limit+1)...)
	if err != nil {
		return nil, err
	}
	var rows []jobRow
	if err := s.r.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, err
	}
	res := &ListResult{}
	if len(rows) > limit {
		rows = rows[:limit]
		res.NextBefore = rows[limit-1].ID
	}
	if res.Jobs, err = records(rows); err != nil {
		return nil, err
	}
	return res, nil
}

// stateNames names every state for a message.
func stateNames() string { return strings.Join(bgcmd.StateNames(bgcmd.States()), ", ") }

// Event is one job_events row: a state transition.
type Event struct {
	Seq    int64          `json:"seq"`
	JobID  string         `json:"job_id"`
	From   bgcmd.State    `json:"from"` // "" for creation
	To     bgcmd.State    `json:"to"`
	At     time.Time      `json:"at"`
	Detail map[string]any `json:"detail,omitempty"`
}

// Events returns a job's transitions in the order they happened.
func (s *Store) Events(ctx context.Context, id string) ([]Event, error) {
	var rows []eventRow
	if err := s.r.SelectContext(ctx, &rows, `SELECT seq, job_id, COALESCE(from_state, '') AS from_state,
		to_state, at, detail FROM job_events WHERE job_id = ? ORDER BY seq`, id); err != nil {
		return nil, fmt.Errorf("job events: %w", err)
	}
	var out []Event
	for _, r := range rows {
		e, err := r.event()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// eventRow is a job_events row as scanned.
type eventRow struct {
	Seq    int64       `db:"seq"`
	JobID  string      `db:"job_id"`
	From   bgcmd.State `db:"from_state"`
	To     bgcmd.State `db:"to_state"`
	At     string      `db:"at"`
	Detail string      `db:"detail"`
}

// event decodes the row's time and detail.
func (r *eventRow) event() (Event, error) {
	e := Event{Seq: r.Seq, JobID: r.JobID, From: r.From, To: r.To}
	var err error
	if e.At, err = parseTime(r.At); err != nil {
		return e, err
	}
	if err := json.Unmarshal([]byte(r.Detail), &e.Detail); err != nil {
		return e, fmt.Errorf("job events: decode detail: %w", err)
	}
	if len(e.Detail) == 0 {
		e.Detail = nil
	}
	return e, nil
}

type artifactRow struct {
	ID        string `db:"id"`
	JobID     string `db:"job_id"`
	Stream    string `db:"stream"`
	SHA256    string `db:"sha256"`
	Bytes     int64  `db:"bytes"`
	Chars     int64  `db:"chars"`
	Lines     int64  `db:"lines"`
	Capped    bool   `db:"capped"`
	CreatedAt string `db:"created_at"`
}

// Artifacts returns a settled job's banked streams (none while running).
func (s *Store) Artifacts(ctx context.Context, jobID string) ([]bgcmd.Artifact, error) {
	var rows []artifactRow
	err := s.r.SelectContext(ctx, &rows, `SELECT id, job_id, stream, sha256, bytes, chars, lines,
		capped, created_at FROM artifacts WHERE job_id = ? ORDER BY stream DESC`, jobID)
	if err != nil {
		return nil, fmt.Errorf("job artifacts: %w", err)
	}
	out := make([]bgcmd.Artifact, 0, len(rows))
	for _, r := range rows {
		a := bgcmd.Artifact{ID: r.ID, JobID: r.JobID, Stream: bgcmd.Stream(r.Stream),
			SHA256: r.SHA256, Bytes: r.Bytes, Chars: r.Chars, Lines: r.Lines, Capped: r.Capped}
		if a.CreatedAt, err = parseTime(r.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
