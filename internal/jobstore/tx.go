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

// inTx runs fn in one write transaction, committing when fn returns nil.
// Write transactions are serialised across every process sharing the
// store: on SQLite they are immediate (BEGIN IMMEDIATE takes the write
// lock), on PostgreSQL they take the store's advisory write lock first
// (dialect.lockWriter).
func (s *Store) inTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	if s.readOnly {
		return ErrReadOnly
	}
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
		// SQLite leaves a transaction open when COMMIT fails (a full disk,
		// say); database/sql forgets it all the same. End it on the one
		// writer connection, or it would hold the write lock for every
		// process sharing the file.
		if !s.d.postgres {
			_, _ = s.w.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
		return describeWriteError(fmt.Errorf("commit: %w", err))
	}
	if s.ckpt != nil {
		s.ckpt.committed()
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
