//go:build !bgcmd_lean

package jobstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"
)

// pgConnector opens PostgreSQL connections (pgx's database/sql driver)
// that take the store's SQL as written for both dialects: "?" placeholders
// become $1, $2, … and SQLite's INDEXED BY hints are dropped (PostgreSQL
// plans from the same partial indexes by itself). pgx keeps each statement
// prepared per connection, as stmtConnector does for SQLite.
type pgConnector struct{ driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{passConn{dc}}, nil
}

// pgConn is one pgx connection speaking the store's SQL.
type pgConn struct{ passConn }

// indexedBy matches a SQLite index hint.
var indexedBy = regexp.MustCompile(`(?i)\s+INDEXED\s+BY\s+\w+`)

// pgTexts caches each statement text's PostgreSQL form.
var pgTexts sync.Map

// pgText is query in PostgreSQL's form.
func pgText(ctx context.Context, query string) string {
	if ctx.Value(rawSQLKey{}) != nil {
		return query
	}
	if q, ok := pgTexts.Load(query); ok {
		return q.(string)
	}
	q := sqlx.Rebind(sqlx.DOLLAR, indexedBy.ReplaceAllString(query, ""))
	pgTexts.Store(query, q)
	return q
}

func (c *pgConn) inner() interface {
	driver.ExecerContext
	driver.QueryerContext
	driver.ConnBeginTx
	driver.ConnPrepareContext
} {
	return c.Conn.(interface {
		driver.ExecerContext
		driver.QueryerContext
		driver.ConnBeginTx
		driver.ConnPrepareContext
	})
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.inner().ExecContext(ctx, pgText(ctx, query), args)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.inner().QueryContext(ctx, pgText(ctx, query), args)
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.inner().PrepareContext(ctx, pgText(ctx, query))
}

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	pc, ok := c.Conn.(*stdlib.Conn)
	if ctx.Value(writerTxKey{}) == nil || opts.ReadOnly || opts.Isolation != 0 {
		return c.inner().BeginTx(ctx, opts)
	}
	if !ok {
		return nil, fmt.Errorf("begin a write transaction: the connection is a %T, not pgx's (open the store with jobstore.Open)", c.Conn)
	}
	// A write transaction: BEGIN and the store's write lock in one round
	// trip (one simple-protocol message of two statements).
	if _, err := pc.Conn().Exec(ctx, lockedBegin); err != nil {
		if pc.Conn().PgConn().TxStatus() != 'I' {
			_, _ = pc.Conn().Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
		return nil, fmt.Errorf("take the store's write lock: %w", err)
	}
	return &pgWriteTx{conn: pc.Conn()}, nil
}

// lockedBegin begins a transaction and takes the store's write lock
// (dialect.lockWriter says what it serialises).
var lockedBegin = "BEGIN; SELECT pg_advisory_xact_lock(" + strconv.FormatInt(writerLockKey, 10) + ")"

// pgWriteTx is a write transaction begun by lockedBegin.
type pgWriteTx struct{ conn *pgx.Conn }

// Commit commits; a transaction the server had already aborted answers
// COMMIT with ROLLBACK, which is an error here, as in pgx's own Tx.
func (t *pgWriteTx) Commit() error {
	tag, err := t.conn.Exec(context.Background(), "COMMIT")
	if err == nil && tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return err
}

func (t *pgWriteTx) Rollback() error {
	if t.conn.PgConn().TxStatus() == 'I' {
		return nil
	}
	_, err := t.conn.Exec(context.Background(), "ROLLBACK")
	return err
}

// CheckNamedValue stores a Go bool as the 0/1 integer both schemas use
// for flags, and values of named basic types (a bgcmd.State) as their
// basic value; the rest is pgx's to encode.
func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if _, ok := nv.Value.(driver.Valuer); !ok {
		if v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value); err == nil {
			nv.Value = v
		}
	}
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
		return nil
	}
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return nil
}

// pgCode is the SQLSTATE of the PostgreSQL error in err's chain, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
