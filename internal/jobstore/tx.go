package jobstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/bgcmd/bgcmd"
)

// ErrReadOnly is returned by every write on a store opened with ReadOnly.
var ErrReadOnly = errors.New("store opened read-only")

// wtx is what the body of a write transaction runs its statements
// through: the *sqlx.Tx of a PostgreSQL transaction, or the writer's
// connection while it holds a SQLite one (sqliteTx).
type wtx interface {
	sqlx.QueryerContext
	sqlx.ExecerContext
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
	Rebind(query string) string
	DriverName() string
}

// sqliteTx is a SQLite write transaction run on the writer's connection
// itself, between a BEGIN IMMEDIATE and a COMMIT sent as statements.
// A database/sql transaction starts a goroutine for itself and one for
// each query inside it that returns rows, each waiting on the
// transaction's context: seven for a job's create and settle. Each start
// and end of one readies a goroutine, which wakes an idle thread when the
// program has a processor to spare. Nothing here watches the context: a
// statement run with one that is cancelled fails, and inTx rolls back
// whatever ended the body early (an error, a panic, a failed COMMIT).
type sqliteTx struct{ *sqlx.Conn }

func (sqliteTx) DriverName() string { return "sqlite" }

// The statements that begin and end a sqliteTx (kept prepared, as every
// statement of the writer's connection is: see Writes.statements).
const (
	beginSQL    = "BEGIN IMMEDIATE"
	commitSQL   = "COMMIT"
	rollbackSQL = "ROLLBACK"
)

// inTx runs fn in one write transaction, committing when fn returns nil.
// Write transactions are serialised across every process sharing the
// store: on SQLite they are immediate (BEGIN IMMEDIATE takes the write
// lock), on PostgreSQL they take the store's advisory write lock first
// (dialect.lockWriter).
func (s *Store) inTx(ctx context.Context, fn func(tx wtx) error) error {
	if s.readOnly {
		return ErrReadOnly
	}
	var err error
	if s.d.postgres {
		err = s.inPostgresTx(ctx, fn)
	} else {
		err = s.inSQLiteTx(ctx, fn)
	}
	if err != nil {
		return err
	}
	if s.ckpt != nil {
		s.ckpt.committed()
	}
	return nil
}

// inSQLiteTx is inTx on SQLite (see sqliteTx).
func (s *Store) inSQLiteTx(ctx context.Context, fn func(tx wtx) error) error {
	conn, err := s.w.Connx(ctx)
	if err != nil {
		return describeWriteError(fmt.Errorf("begin: %w", err))
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, beginSQL); err != nil {
		return describeWriteError(fmt.Errorf("begin: %w", err))
	}
	committed := false
	defer func() {
		if !committed {
			rollback(ctx, conn) // a panic in fn ends here too
		}
	}()
	if err := fn(sqliteTx{conn}); err != nil {
		return describeWriteError(err)
	}
	if _, err := conn.ExecContext(ctx, commitSQL); err != nil {
		return describeWriteError(fmt.Errorf("commit: %w", err))
	}
	committed = true
	return nil
}

// inPostgresTx is inTx on PostgreSQL.
func (s *Store) inPostgresTx(ctx context.Context, fn func(tx wtx) error) error {
	tx, err := s.w.BeginTxx(s.d.writerTx(ctx), nil)
	if err != nil {
		return describeWriteError(fmt.Errorf("begin: %w", err))
	}
	defer tx.Rollback()
	if err := s.d.lockWriter(s.d.writerTx(ctx), tx); err != nil {
		return describeWriteError(err)
	}
	if err := fn(tx); err != nil {
		return describeWriteError(err)
	}
	if err := tx.Commit(); err != nil {
		return describeWriteError(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// notFound maps sql.ErrNoRows to bgcmd.ErrNotFound, naming what was missing.
func notFound(err error, what, id string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s %s: %w", what, id, bgcmd.ErrNotFound)
	}
	return err
}
