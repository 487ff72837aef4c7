package jobstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/bgcmd/bgcmd"
)

// NewID returns a new time-ordered job id (UUIDv7).
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

// CanonicalID reports whether id is a job id in its canonical form (a
// UUID in lower-case hex with dashes): nothing that could name another
// file where an id names one.
func CanonicalID(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id
}

// Create inserts j as a new running job with its creation event, in one
// transaction. It fills j.ID (when empty), j.Host, j.State and j.CreatedAt
// (when zero). A job whose child has already started (j.StartedAt set, as
// an in-process start creates it) is inserted with PID, PGID, PIDStart and
// StartedAt in its row: no MarkStarted follows. Argv must be non-empty;
// the caller has already passed the policy.
func (s *Store) Create(ctx context.Context, j *bgcmd.Job) error {
	return s.create(ctx, j, bgcmd.StateRunning, QueueLimits{})
}

// create inserts j in state (running, or queued with its limits) with its
// creation event.
func (s *Store) create(ctx context.Context, j *bgcmd.Job, state bgcmd.State, lim QueueLimits) error {
	if err := s.readyToCreate(j, state); err != nil {
		return err
	}
	err := s.inTx(ctx, func(tx wtx) error { return insertJob(ctx, tx, j, lim) })
	if err != nil {
		return fmt.Errorf("create job: %w", err)
	}
	return nil
}

// readyToCreate checks j and fills what create fills: its id, session,
// host, state and creation time.
func (s *Store) readyToCreate(j *bgcmd.Job, state bgcmd.State) error {
	if len(j.Argv) == 0 {
		return errors.New("create job: empty argv")
	}
	if j.ID == "" {
		j.ID = NewID()
	}
	if j.Session == "" {
		j.Session = "default"
	}
	j.Host, j.HostID = s.host, s.hostID
	j.State = state
	if j.CreatedAt.IsZero() {
		j.CreatedAt = s.now()
	}
	j.CreatedAt = j.CreatedAt.UTC()
	return nil
}

// insertJob writes j's row (in j.State) and its creation event in tx.
func insertJob(ctx context.Context, tx wtx, j *bgcmd.Job, lim QueueLimits) error {
	// A job created with its child already started (in process) records
	// the child in the same row.
	var pid, pgid int
	var pidStart int64
	var startedAt sql.NullString
	if j.StartedAt != nil && j.State == bgcmd.StateRunning {
		pid, pgid, pidStart = j.PID, j.PGID, j.PIDStart
		startedAt = sql.NullString{String: fmtTime(*j.StartedAt), Valid: true}
	}
	envNames := j.EnvNames
	if envNames == nil {
		envNames = []string{}
	}
	labels := j.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	after := j.After
	if after == nil {
		after = []string{}
	}
	var memMax, pidsMax int64
	if l := j.ResourceLimits; l != nil {
		memMax, pidsMax = l.MemoryMaxBytes, int64(l.PidsMax)
	}
	var rerunOf any
	if j.RerunOf != "" {
		rerunOf = j.RerunOf
	}
	if j.State == bgcmd.StateQueued {
		if err := checkDependencies(ctx, tx, j); err != nil {
			return err
		}
		if err := checkQueueRoom(ctx, tx, j, lim.Queued); err != nil {
			return err
		}
	}
	argv, names, created := mustJSON(j.Argv), mustJSON(envNames), fmtTime(j.CreatedAt)
	_, err := tx.ExecContext(ctx, insertJobSQL,
		j.ID, j.Session, j.Host, j.HostID, argv, j.Exe, j.Cwd, j.EnvReplaced,
		names, j.Timeout.Milliseconds(), j.KillGrace.Milliseconds(),
		j.MaxOutputBytes, mustJSON(labels), j.State, j.SupervisorPID,
		j.SupervisorStart, j.BootID, j.Detached, created,
		j.Group, mustJSON(after), lim.Session, lim.Group, rerunOf, j.Priority, j.ExeSHA256,
		memMax, pidsMax, pid, pgid, pidStart, startedAt)
	if err != nil {
		return err
	}
	r := &rolled{Session: j.Session, Exe: j.Exe, CreatedAt: created, State: string(j.State), StartedAt: startedAt}
	if err := keepRollups(ctx, tx, nil, r); err != nil {
		return err
	}
	return appendEvent(ctx, tx, j.ID, "", j.State, j.CreatedAt, nil, creationFacts(j, argv, names))
}

// insertJobSQL writes a job's row (create).
const insertJobSQL = `INSERT INTO jobs (id, session, host, host_id, argv, exe,
	cwd, env_replaced, env_names, timeout_ms, kill_grace_ms, max_output_bytes,
	labels, state, supervisor_pid, supervisor_start, boot_id, detached, created_at,
	queue_group, after_ids, session_max, group_max, rerun_of, priority, exe_sha256,
	memory_max_bytes, pids_max, pid, pgid, pid_start, started_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULLIF(?, ''), ?, ?, ?, ?, ?, ?)`

// Get returns the job with id, or an error wrapping bgcmd.ErrNotFound.
// A job announced ahead of its row (Announce) reads as its row.
func (s *Store) Get(ctx context.Context, id string) (*Record, error) {
	var row jobRow
	get := func() error { return s.r.GetContext(ctx, &row, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id) }
	err := get()
	if errors.Is(err, sql.ErrNoRows) && CanonicalID(id) {
		if lerr := s.landAnnounced(ctx, id); lerr != nil {
			return nil, fmt.Errorf("get job: %w", lerr)
		}
		err = get()
	}
	if err != nil {
		return nil, fmt.Errorf("get job: %w", notFound(err, "job", id))
	}
	return row.record()
}

// StartedParams records the child process of a running job.
type StartedParams struct {
	ID        string
	PID, PGID int
	// PIDStart is the child's start time in clock ticks after boot.
	PIDStart  int64
	StartedAt time.Time
}

// MarkStarted records the child's pid, process group and start time on a
// running job. It is not a state transition; it fails with
// ErrInvalidTransition when the job is no longer running.
func (s *Store) MarkStarted(ctx context.Context, p StartedParams) error {
	err := s.inTx(ctx, func(tx wtx) error {
		res, err := tx.ExecContext(ctx, markStartedSQL, p.PID, p.PGID, p.PIDStart, fmtTime(p.StartedAt), p.ID)
		if err != nil {
			return err
		}
		return expectOne(ctx, tx, res, p.ID, bgcmd.StateRunning)
	})
	if err != nil {
		return fmt.Errorf("mark job started: %w", err)
	}
	return nil
}

// markStartedSQL records a running job's child (MarkStarted).
const markStartedSQL = `UPDATE jobs SET pid = ?, pgid = ?, pid_start = ?,
	started_at = ? WHERE id = ? AND state = 'running'`

// ClaimParams hands a running job to a (new) supervisor process.
type ClaimParams struct {
	ID              string
	SupervisorPID   int
	SupervisorStart int64
	BootID          string
	// FromPID and FromStart, when FromPID is non-zero, make the claim a
	// compare-and-set on the current supervisor too: a detached supervisor
	// claims from the host that launched it, and reconcile takes a job over
	// from the dead supervisor it saw, so of two claimants exactly one wins.
	FromPID   int
	FromStart int64
}

// Claim records the supervisor of a running job (compare-and-set on the
// state). A detached supervisor claims its job before it spawns the child;
// when the job has already settled (reconcile got there first) Claim fails
// with ErrInvalidTransition and the supervisor must not start anything.
func (s *Store) Claim(ctx context.Context, p ClaimParams) error {
	_, err := s.ClaimRecord(ctx, p)
	return err
}

// ClaimRecord is Claim returning the claimed job as its row now reads, from
// the same statement (no read after the write).
func (s *Store) ClaimRecord(ctx context.Context, p ClaimParams) (*Record, error) {
	var rec *Record
	err := s.inTx(ctx, func(tx wtx) error {
		var row jobRow
		err := tx.GetContext(ctx, &row, `UPDATE jobs SET supervisor_pid = ?,
			supervisor_start = ?, boot_id = ? WHERE id = ? AND state IN ('running', 'queued')
			AND (? = 0 OR (supervisor_pid = ? AND supervisor_start = ?)) RETURNING `+jobColumns,
			p.SupervisorPID, p.SupervisorStart, p.BootID, p.ID,
			p.FromPID, p.FromPID, p.FromStart)
		if errors.Is(err, sql.ErrNoRows) {
			return expectOne(ctx, tx, zeroRows{}, p.ID, bgcmd.StateRunning)
		}
		if err != nil {
			return err
		}
		rec, err = row.record()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim job: %w", err)
	}
	return rec, nil
}

// zeroRows is the result of a compare-and-set that matched no row.
type zeroRows struct{}

func (zeroRows) RowsAffected() (int64, error) { return 0, nil }

// RequestKill records a kill request on a running job and returns the job as
// it is now. The latest request's signal is kept (a SIGKILL after a SIGTERM
// escalates); the time of the first request is kept, and this store's
// host as the latest request's origin. A settled job is returned unchanged,
// without error.
func (s *Store) RequestKill(ctx context.Context, id, signal string) (*Record, error) {
	var rec *Record
	err := s.inTx(ctx, func(tx wtx) error {
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET kill_signal = ?,
			kill_requested_at = COALESCE(kill_requested_at, ?), kill_host = ?, kill_host_id = ?
			WHERE id = ? AND state = 'running'`,
			signal, fmtTime(s.now()), s.host, s.hostID, id)
		if err != nil {
			return err
		}
		var row jobRow
		if err := tx.GetContext(ctx, &row, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id); err != nil {
			return notFound(err, "job", id)
		}
		rec, err = row.record()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("request kill: %w", err)
	}
	return rec, nil
}

// MarkSeen records the first read of a settled job, clearing it from the
// session's finished counter. It reports whether this call cleared it
// (exactly one caller does); a running or already-seen job is left alone.
func (s *Store) MarkSeen(ctx context.Context, id string) (bool, error) {
	if s.readOnly {
		return false, nil
	}
	var cleared bool
	mark := func(tx wtx) error {
		var r rolled
		err := tx.GetContext(ctx, &r, markSeenSQL, fmtTime(s.now()), id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		cleared = true
		from := r
		from.SeenAt = sql.NullString{}
		return keepRollups(ctx, tx, &from, &r)
	}
	var err error
	if s.d.hasRollup() {
		err = s.inTx(ctx, mark)
	} else {
		err = mark(s.w) // one statement: nothing to keep beside it
	}
	if err != nil {
		return false, fmt.Errorf("mark job seen: %w", err)
	}
	return cleared, nil
}

// markSeenSQL records a settled job's first read (MarkSeen).
const markSeenSQL = `UPDATE jobs SET seen_at = ?
	WHERE id = ? AND state NOT IN ('running', 'queued') AND seen_at IS NULL
	RETURNING ` + rolledColumns

func records(rows []jobRow) ([]*Record, error) {
	out := make([]*Record, 0, len(rows))
	for i := range rows {
		r, err := rows[i].record()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// expectOne turns a zero-row compare-and-set into ErrNotFound or
// ErrInvalidTransition (naming the state found).
func expectOne(ctx context.Context, tx wtx, res interface{ RowsAffected() (int64, error) }, id string, want bgcmd.State) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 1 {
		return nil
	}
	var state string
	if err := tx.GetContext(ctx, &state, `SELECT state FROM jobs WHERE id = ?`, id); err != nil {
		return notFound(err, "job", id)
	}
	if state == string(want) {
		return fmt.Errorf("job %s has another supervisor now: %w", id, bgcmd.ErrInvalidTransition)
	}
	return fmt.Errorf("job %s is %s, not %s: %w", id, state, want, bgcmd.ErrInvalidTransition)
}

// insertEventSQL writes a transition's event row (appendEvent).
const insertEventSQL = `INSERT INTO job_events (job_id, from_state, to_state, at, detail)
	VALUES (?, ?, ?, ?, ?) RETURNING seq`

// appendEvent appends job id's transition from from ("" for its creation)
// to to, at at, with detail, to job_events and to the chain, in the
// caller's write transaction. facts, when they cover what the event's
// canonical form needs (eventFacts.covers), say what the transaction
// stored; without them the event is read back with the job's row to be
// chained.
func appendEvent(ctx context.Context, tx wtx, id string, from, to bgcmd.State, at time.Time, detail map[string]any, facts *eventFacts) error {
	var fromVal any
	if from != "" {
		fromVal = string(from)
	}
	d := "{}"
	if len(detail) > 0 {
		b, err := encodeJSON(detail)
		if err != nil {
			return fmt.Errorf("encode event detail: %w", err)
		}
		d = string(b)
	}
	if facts.covers(from, to) {
		e := &eventScan{jobID: id, from: sql.NullString{String: string(from), Valid: from != ""},
			to: string(to), at: fmtTime(at), detail: d}
		facts.fill(e)
		return appendChainedEvent(ctx, tx, e)
	}
	var seq int64
	err := tx.GetContext(ctx, &seq, insertEventSQL, id, fromVal, string(to), fmtTime(at), d)
	if err != nil {
		return err
	}
	return chainEvent(ctx, tx, seq)
}

// ClaimMany makes each claim of ps as Claim does, all in one transaction
// (reconcile takes many orphaned jobs over at once). claimed[i] says
// whether ps[i] won; a claim that lost (the job settled, or another
// supervisor holds it, or it is gone) is false, not an error. An error
// means nothing was claimed.
func (s *Store) ClaimMany(ctx context.Context, ps []ClaimParams) (claimed []bool, err error) {
	claimed = make([]bool, len(ps))
	err = s.inTx(ctx, func(tx wtx) error {
		for i, p := range ps {
			res, err := tx.ExecContext(ctx, `UPDATE jobs SET supervisor_pid = ?,
			supervisor_start = ?, boot_id = ? WHERE id = ? AND state = 'running'
			AND (? = 0 OR (supervisor_pid = ? AND supervisor_start = ?))`,
				p.SupervisorPID, p.SupervisorStart, p.BootID, p.ID,
				p.FromPID, p.FromPID, p.FromStart)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			claimed[i] = n == 1
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim jobs: %w", err)
	}
	return claimed, nil
}
