package jobstore

import (
	"context"
	"database/sql/driver"
	"regexp"
	"sync"

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
	return &pgConn{Conn: dc}, nil
}

// pgConn is one pgx connection speaking the store's SQL.
type pgConn struct{ driver.Conn }

// rawSQLKey marks a context whose statements are run exactly as given
// (ad-hoc queries, where "?" is a jsonb operator).
type rawSQLKey struct{}

// withRawSQL returns ctx marked so that pgConn runs its SQL unchanged.
func withRawSQL(ctx context.Context) context.Context {
	return context.WithValue(ctx, rawSQLKey{}, true)
}

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
	return c.inner().BeginTx(ctx, opts)
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

func (c *pgConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *pgConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *pgConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}
