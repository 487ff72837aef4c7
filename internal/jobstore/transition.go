package jobstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/bgcmd/bgcmd"
)

// SettleParams describe the one terminal transition of a running job.
type SettleParams struct {
	ID string
	// To is the settled state; it must not be StateRunning.
	To       bgcmd.State
	ExitCode *int
	Signal   string
	Error    string
	// FinishedAt defaults to the store's clock.
	FinishedAt time.Time
	// Detail goes into the job_events row (for example how many leftover
	// processes of the group were killed).
	Detail map[string]any
	// Artifacts are the banked streams, referenced in the same transaction.
	// ID and JobID are filled in when empty.
	Artifacts []bgcmd.Artifact
	// ExpectSupervisorPID, when non-zero, makes the compare-and-set also
	// require this supervisor: reconcile settles a job only if no new
	// supervisor has claimed it since it looked.
	ExpectSupervisorPID int
	// Usage is what the job's processes cost (nil: not known, the columns
	// stay NULL).
	Usage *bgcmd.Usage
}

// Settle moves a running job to p.To with a compare-and-set on the state,
// appends its job_events row and inserts its artifact rows, all in one
// transaction, and returns the settled job. A job that has already settled
// is never changed: the error wraps bgcmd.ErrInvalidTransition. An unknown id
// wraps bgcmd.ErrNotFound.
func (s *Store) Settle(ctx context.Context, p SettleParams) (*Record, error) {
	rec, _, err := s.settle(ctx, p, false)
	return rec, err
}

// AfterSettle is what SettleAndPeek read in the settle's own transaction,
// as the settle left the store.
type AfterSettle struct {
	// Queued says whether this host has a queued job: the dispatch a
	// settle calls for (a slot freed, a dependency met) need not open a
	// read to find there is nothing to dispatch. A job queued after the
	// commit is the business of its enqueuer, who dispatches once it is on
	// record and sees the slot this settle freed.
	Queued bool
	// Counters are the job's session's counters, this settle counted.
	Counters bgcmd.Counters
}

// SettleAndPeek is Settle that also reads, in the same transaction, what
// its settler needs next (AfterSettle): no read transaction of its own
// after the commit.
func (s *Store) SettleAndPeek(ctx context.Context, p SettleParams) (*Record, AfterSettle, error) {
	return s.settle(ctx, p, true)
}

func (s *Store) settle(ctx context.Context, p SettleParams, peek bool) (rec *Record, after AfterSettle, err error) {
	if !p.To.Settled() {
		return nil, after, fmt.Errorf("settle job %s: %q is not a settled state: %w", p.ID, p.To, bgcmd.ErrInvalidTransition)
	}
	if p.FinishedAt.IsZero() {
		p.FinishedAt = s.now()
	}
	err = s.inTx(ctx, func(tx wtx) error {
		var err error
		if rec, err = settleTx(ctx, tx, p, true); err != nil || !peek {
			return err
		}
		if err := tx.GetContext(ctx, &after.Queued, hasQueuedSQL, s.hostID); err != nil {
			return err
		}
		after.Counters, err = s.countersIn(ctx, tx, rec.Session)
		return err
	})
	if err != nil {
		return nil, AfterSettle{}, fmt.Errorf("settle job: %w", err)
	}
	return rec, after, nil
}

// SettleMany settles each of ps as Settle does, all in one transaction
// (reconcile settles many jobs at once). errs[i] is ps[i]'s own outcome: nil,
// or an error wrapping bgcmd.ErrInvalidTransition or bgcmd.ErrNotFound for
// a job that was not changed. Any other failure rolls the whole batch back
// and is returned as err (nothing settled); settle those one by one.
func (s *Store) SettleMany(ctx context.Context, ps []SettleParams) (errs []error, err error) {
	for i := range ps {
		if !ps[i].To.Settled() {
			return nil, fmt.Errorf("settle job %s: %q is not a settled state: %w", ps[i].ID, ps[i].To, bgcmd.ErrInvalidTransition)
		}
		if ps[i].FinishedAt.IsZero() {
			ps[i].FinishedAt = s.now()
		}
	}
	errs = make([]error, len(ps))
	err = s.inTx(ctx, func(tx wtx) error {
		for i := range ps {
			_, err := settleTx(ctx, tx, ps[i], false)
			if errors.Is(err, bgcmd.ErrInvalidTransition) || errors.Is(err, bgcmd.ErrNotFound) {
				errs[i] = fmt.Errorf("settle job: %w", err)
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("settle jobs: %w", err)
	}
	return errs, nil
}

// settleJobNoRowSQL is a running job's terminal transition, a
// compare-and-set on its state (and, when given, its supervisor);
// settleJobSQL, what Settle runs, returns the row as well, and
// settleJobRolledSQL, what SettleMany runs, what the roll-ups count of it.
const (
	settleJobNoRowSQL = `UPDATE jobs SET state = ?, exit_code = ?, signal = ?,
	error = ?, finished_at = ?, cpu_user_ms = ?, cpu_system_ms = ?, max_rss_kib = ?
	WHERE id = ? AND state = 'running'
	AND (? = 0 OR supervisor_pid = ?)`
	settleJobSQL       = settleJobNoRowSQL + ` RETURNING ` + jobColumns
	settleJobRolledSQL = settleJobNoRowSQL + ` RETURNING ` + rolledColumns
)

// settleTx settles p in tx and, when want is set, returns the settled job
// (SettleMany's caller needs none: decoding a row is most of a settle's
// cost after the statements themselves).
func settleTx(ctx context.Context, tx wtx, p SettleParams, want bool) (*Record, error) {
	var exit any
	if p.ExitCode != nil {
		exit = *p.ExitCode
	}
	var cpuUser, cpuSystem, maxRSS any
	if u := p.Usage; u != nil {
		cpuUser, cpuSystem, maxRSS = u.CPUUserMS, u.CPUSystemMS, u.MaxRSSKiB
	}
	args := []any{string(p.To), exit, p.Signal, p.Error, fmtTime(p.FinishedAt), cpuUser, cpuSystem, maxRSS, p.ID,
		p.ExpectSupervisorPID, p.ExpectSupervisorPID}
	var row jobRow
	var r *rolled
	var err error
	if want {
		if err = tx.GetContext(ctx, &row, settleJobSQL, args...); err == nil {
			r = rolledOf(&row)
		}
	} else {
		r = new(rolled)
		err = tx.GetContext(ctx, r, settleJobRolledSQL, args...)
	}
	if err != nil {
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		var state string
		if err := tx.GetContext(ctx, &state, `SELECT state FROM jobs WHERE id = ?`, p.ID); err != nil {
			return nil, notFound(err, "job", p.ID)
		}
		if state == string(bgcmd.StateRunning) {
			return nil, fmt.Errorf("job %s has another supervisor than pid %d: %w", p.ID, p.ExpectSupervisorPID, bgcmd.ErrInvalidTransition)
		}
		return nil, fmt.Errorf("job %s already %s: %w", p.ID, state, bgcmd.ErrInvalidTransition)
	}
	if err := keepRollups(ctx, tx, r.before(bgcmd.StateRunning, true), r); err != nil {
		return nil, err
	}
	for i := range p.Artifacts {
		a := &p.Artifacts[i]
		if a.ID == "" {
			a.ID = NewID()
		}
		a.JobID = p.ID
		if a.CreatedAt.IsZero() {
			a.CreatedAt = p.FinishedAt
		}
		if err := insertArtifact(ctx, tx, a); err != nil {
			return nil, err
		}
	}
	// After the artifacts: the event's chain hash covers their hashes.
	if err := appendEvent(ctx, tx, p.ID, bgcmd.StateRunning, p.To, p.FinishedAt, p.Detail,
		outcomeFacts(nullInt64(p.ExitCode), p.Signal, p.Error, p.Artifacts)); err != nil {
		return nil, err
	}
	if !want {
		return nil, nil
	}
	return row.record()
}

// insertArtifactSQL writes a banked stream's artifact row.
const insertArtifactSQL = `INSERT INTO artifacts (id, job_id, stream, sha256, bytes,
	chars, lines, capped, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

func insertArtifact(ctx context.Context, tx wtx, a *bgcmd.Artifact) error {
	_, err := tx.ExecContext(ctx, insertArtifactSQL,
		a.ID, a.JobID, string(a.Stream), a.SHA256, a.Bytes, a.Chars, a.Lines, a.Capped,
		fmtTime(a.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert %s artifact: %w", a.Stream, err)
	}
	return nil
}
