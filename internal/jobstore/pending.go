package jobstore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jmoiron/sqlx"

	"github.com/bgcmd/bgcmd"
)

// PendingCreate is a running job's row written ahead of its child's start,
// in a write transaction left open: BeginCreate writes the row and its
// creation event while the child is being started elsewhere (a detached
// supervisor's fork and exec), and Commit records the child in the same
// transaction and commits it, so that the start's one durable write costs
// its caller only that last step. Until Commit nothing of the job is
// visible, and a process that dies meanwhile leaves nothing: SQLite drops
// the open transaction. Abort drops it too.
//
// The transaction holds the store's write lock while the child starts:
// every other writer waits (within its busy timeout), as it would for the
// create itself. So a caller that waits long lets go (Abort) and writes the
// job whole once the child runs (Create). On PostgreSQL, whose write lock
// is the store's, BeginCreate only checks the job and Commit is the whole
// create.
//
// Abort may be called from any goroutine, also while Commit runs (it then
// waits for it); after Abort, Commit fails with ErrCreateDropped.
type PendingCreate struct {
	s   *Store
	job *bgcmd.Job

	mu    sync.Mutex
	conn  *sqlx.Conn // the writer's connection in the transaction; nil once ended
	ended error      // nil while open; ErrCreateDropped once aborted; errCommitted
}

// ErrCreateDropped is Commit's error after Abort: nothing is on record.
var ErrCreateDropped = errors.New("create job: the create begun ahead was dropped; nothing is on record")

// errCommitted marks a PendingCreate whose Commit ran.
var errCommitted = errors.New("create job: committed already")

// BeginCreate begins the create of j as a running job whose child is
// being started: it fills j as Create does and, on SQLite, writes j's row
// (with no child yet) and its creation event in a transaction it leaves
// open. j.StartedAt must be nil.
func (s *Store) BeginCreate(ctx context.Context, j *bgcmd.Job) (*PendingCreate, error) {
	if s.readOnly {
		return nil, ErrReadOnly
	}
	if j.StartedAt != nil {
		return nil, errors.New("begin create: the job's child has started already: use Create")
	}
	if err := s.readyToCreate(j, bgcmd.StateRunning); err != nil {
		return nil, err
	}
	p := &PendingCreate{s: s, job: j}
	if s.d.postgres {
		return p, nil
	}
	conn, err := s.w.Connx(ctx)
	if err != nil {
		return nil, describeWriteError(fmt.Errorf("create job: begin: %w", err))
	}
	// Compiled before the write lock is taken, and the Commit's too.
	if err := prepareOn(ctx, conn.Conn, BeginCreateWrites.statements()); err != nil {
		conn.Close()
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, beginSQL); err != nil {
		conn.Close()
		return nil, describeWriteError(fmt.Errorf("create job: begin: %w", err))
	}
	if err := insertJob(ctx, sqliteTx{conn}, j, QueueLimits{}); err != nil {
		rollback(ctx, conn)
		conn.Close()
		return nil, describeWriteError(fmt.Errorf("create job: %w", err))
	}
	p.conn = conn
	return p, nil
}

// Commit records the job's started child (PID, PGID, PIDStart and
// StartedAt of st; its ID must be the job's) in the row and commits the
// create: the job then reads as Create would have written it with those
// facts, and they are set in the job BeginCreate was given. On an error
// nothing is on record.
func (p *PendingCreate) Commit(ctx context.Context, st StartedParams) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended != nil {
		return p.ended
	}
	j := p.job
	if st.ID != j.ID {
		return fmt.Errorf("create job: commit of job %s given the start of %s", j.ID, st.ID)
	}
	p.ended = errCommitted
	at := st.StartedAt.UTC()
	if p.conn == nil { // PostgreSQL: the whole create, now
		j.PID, j.PGID, j.PIDStart, j.StartedAt = st.PID, st.PGID, st.PIDStart, &at
		if err := p.s.create(ctx, j, bgcmd.StateRunning, QueueLimits{}); err != nil {
			j.PID, j.PGID, j.PIDStart, j.StartedAt = 0, 0, 0, nil
			return err
		}
		return nil
	}
	conn := p.conn
	p.conn = nil
	defer conn.Close()
	res, err := conn.ExecContext(ctx, markStartedSQL, st.PID, st.PGID, st.PIDStart, fmtTime(at), j.ID)
	if err == nil {
		err = expectOne(ctx, sqliteTx{conn}, res, j.ID, bgcmd.StateRunning)
	}
	if err == nil {
		if _, err = conn.ExecContext(ctx, commitSQL); err != nil {
			err = fmt.Errorf("commit: %w", err)
		}
	}
	if err != nil {
		rollback(ctx, conn)
		return describeWriteError(fmt.Errorf("create job: %w", err))
	}
	if p.s.ckpt != nil {
		p.s.ckpt.committed()
	}
	j.PID, j.PGID, j.PIDStart, j.StartedAt = st.PID, st.PGID, st.PIDStart, &at
	return nil
}

// Abort drops the create unless Commit has run: nothing of the job is on
// record, and the store's write lock is free. It may be called more than
// once, and on a nil PendingCreate (none was begun), where it does nothing.
func (p *PendingCreate) Abort() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended != nil {
		return
	}
	p.ended = ErrCreateDropped
	if p.conn != nil {
		rollback(context.Background(), p.conn)
		p.conn.Close()
		p.conn = nil
	}
}

// rollback ends conn's open transaction, also after a failed COMMIT (a
// full disk, say), which leaves it open holding the write lock for every
// process sharing the file.
func rollback(ctx context.Context, conn *sqlx.Conn) {
	_, _ = conn.ExecContext(context.WithoutCancel(ctx), rollbackSQL)
}
