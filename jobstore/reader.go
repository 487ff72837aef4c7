package jobstore

import (
	"context"
	"path/filepath"

	"github.com/bgcmd/bgcmd"
	store "github.com/bgcmd/bgcmd/internal/jobstore"
)

// The value types a Reader returns and takes, shared with package runner
// (Runner.Job returns a *Record, Runner.List takes ListParams).
type (
	// Record is one job's row: the job, its state and its outcome.
	Record = store.Record
	// Event is one recorded transition of a job.
	Event = store.Event
	// ListParams filter and page List.
	ListParams = store.ListParams
	// ListResult is one page of jobs, newest first, with the cursor of
	// the next page.
	ListResult = store.ListResult
	// EventsParams page the event feed.
	EventsParams = store.EventsParams
	// FeedEvent is one entry of the event feed, with its sequence number.
	FeedEvent = store.FeedEvent
	// QueryRow is one row of a read-only SQL query, one value per column.
	QueryRow = store.QueryRow
	// VerifyChainParams choose what VerifyChain checks.
	VerifyChainParams = store.VerifyChainParams
	// ChainReport is what VerifyChain found.
	ChainReport = store.ChainReport
	// ChainHead names the newest chained row.
	ChainHead = store.ChainHead
	// PruneParams choose what runner.Runner.Prune removes.
	PruneParams = store.PruneParams
)

// MaxListLimit bounds one page of List.
const MaxListLimit = store.MaxListLimit

// DatabaseFile is the name of the database inside a bgcmd home.
const DatabaseFile = "bgcmd.db"

// Reader reads a bgcmd home's database. It is safe for concurrent use.
type Reader struct {
	s *store.Store
}

// Open opens the database of the bgcmd home directory home read-only. The
// database must exist (a runner or the CLI creates it).
func Open(ctx context.Context, home string) (*Reader, error) {
	s, err := store.OpenReadOnly(ctx, filepath.Join(home, DatabaseFile))
	if err != nil {
		return nil, err
	}
	return &Reader{s: s}, nil
}

// OpenDB opens the store of the bgcmd home directory home read-only, on
// the PostgreSQL database dsn names (a postgres:// URL, as bgcmd's --db
// and BGCMD_DB take) or, with dsn empty, the SQLite file in home. On
// PostgreSQL every session is read-only on the server.
func OpenDB(ctx context.Context, home, dsn string) (*Reader, error) {
	if dsn == "" {
		return Open(ctx, home)
	}
	s, err := store.Open(ctx, store.Options{Path: filepath.Join(home, DatabaseFile), DSN: dsn, ReadOnly: true})
	if err != nil {
		return nil, err
	}
	return &Reader{s: s}, nil
}

// Close releases the database.
func (r *Reader) Close() error { return r.s.Close() }

// Get returns one job by its full id; bgcmd.ErrNotFound when there is none.
func (r *Reader) Get(ctx context.Context, id string) (*Record, error) { return r.s.Get(ctx, id) }

// ResolveID turns a unique prefix or suffix of a job id into the full id.
func (r *Reader) ResolveID(ctx context.Context, ref string) (string, error) {
	return r.s.ResolveID(ctx, ref)
}

// Events returns a job's transitions, oldest first.
func (r *Reader) Events(ctx context.Context, id string) ([]Event, error) {
	return r.s.Events(ctx, id)
}

// List returns one page of jobs, newest first.
func (r *Reader) List(ctx context.Context, p ListParams) (*ListResult, error) {
	return r.s.List(ctx, p)
}

// Counters returns the running, finished-but-unread and queued counts of a
// session ("" for every session).
func (r *Reader) Counters(ctx context.Context, session string) (bgcmd.Counters, error) {
	return r.s.Counters(ctx, session)
}

// EventsAfter returns the event feed after a sequence number, oldest first.
func (r *Reader) EventsAfter(ctx context.Context, p EventsParams) ([]FeedEvent, error) {
	return r.s.EventsAfter(ctx, p)
}

// EventsPage returns one page of EventsAfter and next, the sequence number
// to pass as the next page's After: the last event's when the page is
// full, else that of the newest event in the store when the page was
// read. A poller that filters (one session, settles only) resumes from
// next and never reads again the events it skipped, other sessions'
// among them; every event at or below next has been looked at, and none
// can appear later.
func (r *Reader) EventsPage(ctx context.Context, p EventsParams) (evs []FeedEvent, next int64, err error) {
	return r.s.EventsPage(ctx, p)
}

// Refusals returns the newest refused starts, newest first.
func (r *Reader) Refusals(ctx context.Context, limit int) ([]bgcmd.Refusal, error) {
	return r.s.Refusals(ctx, limit)
}

// Artifacts returns the banked output of a job.
func (r *Reader) Artifacts(ctx context.Context, id string) ([]bgcmd.Artifact, error) {
	return r.s.Artifacts(ctx, id)
}

// Query runs one read-only SQL statement: columns receives the column
// names, then row each row. Writes, ATTACH and pragma changes are refused.
func (r *Reader) Query(ctx context.Context, query string, columns func([]string) error, row func(QueryRow) error) error {
	return r.s.Query(ctx, query, columns, row)
}

// ChainHead returns the newest chained row, to be kept elsewhere and
// checked later with VerifyChain.
func (r *Reader) ChainHead(ctx context.Context) (ChainHead, error) { return r.s.ChainHead(ctx) }

// VerifyChain recomputes the evidence chain and reports where it breaks.
func (r *Reader) VerifyChain(ctx context.Context, p VerifyChainParams) (*ChainReport, error) {
	return r.s.VerifyChain(ctx, p)
}
