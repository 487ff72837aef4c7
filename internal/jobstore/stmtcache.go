package jobstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	"modernc.org/sqlite"
)

// maxCachedStmts bounds the prepared statements one connection keeps; past
// it, statements are prepared for each use as before. The store's own SQL
// is a few dozen distinct texts.
const maxCachedStmts = 128

// maxCachedSQL is the longest statement text kept prepared: migrations and
// other long scripts are parsed per use.
const maxCachedSQL = 4096

// baseDriver is the registered modernc SQLite driver, which stmtConnector
// wraps.
var baseDriver = sync.OnceValue(func() driver.Driver {
	db, err := sql.Open("sqlite", "")
	if err != nil {
		panic("jobstore: the sqlite driver is not registered: " + err.Error())
	}
	defer db.Close()
	return db.Driver()
})

// stmtConnector opens SQLite connections that keep each statement they run
// prepared, by its text, for the life of the connection: parsing and
// planning the SQL is a large share of a short transaction's cost, and the
// store runs the same few statements over and over. Behaviour is that of
// the plain driver; only the parse is saved.
type stmtConnector struct{ dsn string }

func (c stmtConnector) Connect(context.Context) (driver.Conn, error) {
	warmHeap() // once per process, before its first connection
	dc, err := baseDriver().Open(c.dsn)
	if err != nil {
		return nil, err
	}
	if err := persistWAL(dc); err != nil {
		dc.Close()
		return nil, err
	}
	return &stmtConn{passConn: passConn{dc}, stmts: map[string]*cachedStmt{}}, nil
}

// persistWAL keeps the write-ahead log and its index (-wal, -shm) when
// the last connection to the database closes: SQLite still checkpoints
// the log then, but no longer deletes both files for the next process to
// create again. Many short processes share one store (every CLI command,
// every detached supervisor), and creating and removing two files for
// each costs more than the rest of a short command's work on some
// filesystems. The last close empties the log instead (journal_size_limit,
// see openDB), and a log in use starts again from its beginning after a
// checkpoint.
func persistWAL(dc driver.Conn) error {
	fc, ok := dc.(sqlite.FileControl)
	if !ok {
		return errors.New("open store: the sqlite driver cannot keep the write-ahead log (no FileControl)")
	}
	if _, err := fc.FileControlPersistWAL("main", 1); err != nil {
		return fmt.Errorf("open store: keep the write-ahead log: %w", err)
	}
	return nil
}

func (c stmtConnector) Driver() driver.Driver { return baseDriver() }

// stmtConn is one driver connection with its prepared statements. The sql
// package uses a connection from one goroutine at a time, so it needs no
// lock.
type stmtConn struct {
	passConn
	stmts map[string]*cachedStmt
	// uncached is set once an authorizer guards the connection (a
	// read-only query's connection): SQLite checks the authorizer when it
	// prepares, so from then on every statement is prepared under it.
	uncached bool
}

// cachedStmt is a prepared statement; busy while rows read from it are open
// (a statement run again meanwhile, nested in that read, gets a fresh one).
type cachedStmt struct {
	driver.Stmt
	busy bool
}

// Unwrap returns the driver's own connection (modernc's helpers such as
// sqlite.Limit look through wrappers with it).
func (c *stmtConn) Unwrap() driver.Conn { return c.Conn }

func (c *stmtConn) inner() interface {
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

// stmt returns the connection's idle prepared statement for query,
// preparing it on first use; nil means run it unprepared.
func (c *stmtConn) stmt(ctx context.Context, query string) (*cachedStmt, error) {
	if c.uncached || len(query) > maxCachedSQL {
		return nil, nil
	}
	if s, ok := c.stmts[query]; ok {
		if s.busy {
			return nil, nil
		}
		return s, nil
	}
	if len(c.stmts) >= maxCachedStmts {
		return nil, nil
	}
	ds, err := c.inner().PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s := &cachedStmt{Stmt: ds}
	c.stmts[query] = s
	return s, nil
}

func (c *stmtConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.stmt(ctx, query)
	if err != nil || s == nil {
		return c.inner().ExecContext(ctx, query, args)
	}
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *stmtConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.stmt(ctx, query)
	if err != nil || s == nil {
		return c.inner().QueryContext(ctx, query, args)
	}
	rows, err := s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	s.busy = true
	return &stmtRows{Rows: rows, s: s}, nil
}

func (c *stmtConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.inner().PrepareContext(ctx, query)
}

func (c *stmtConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.inner().BeginTx(ctx, opts)
}

// RegisterAuthorizer installs fn on the connection and stops keeping
// statements prepared on it (those prepared before were not checked by fn).
func (c *stmtConn) RegisterAuthorizer(fn sqlite.AuthorizerFn) error {
	ar, ok := c.Conn.(sqlite.AuthorizerRegisterer)
	if !ok {
		return errors.New("the SQLite driver connection has no authorizer")
	}
	c.uncached = true
	c.closeStmts()
	return ar.RegisterAuthorizer(fn)
}

func (c *stmtConn) closeStmts() error {
	var errs []error
	for q, s := range c.stmts {
		errs = append(errs, s.Close())
		delete(c.stmts, q)
	}
	return errors.Join(errs...)
}

// Close finalizes the prepared statements, then closes the connection.
func (c *stmtConn) Close() error {
	return errors.Join(c.closeStmts(), c.Conn.Close())
}

// stmtRows frees its statement for reuse when closed.
type stmtRows struct {
	driver.Rows
	s *cachedStmt
}

func (r *stmtRows) Close() error {
	err := r.Rows.Close()
	r.s.busy = false
	return err
}

func (r *stmtRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}
