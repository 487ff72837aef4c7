package jobstore

import (
	"context"
	"database/sql/driver"
)

// passConn wraps a driver connection for the store's own wrappers
// (stmtConn on SQLite, pgConn on PostgreSQL) and passes through the
// optional interfaces database/sql probes a connection for: Ping,
// ResetSession and IsValid. A wrapper that did not would make the pool
// treat every connection as always valid and never reset.
type passConn struct{ driver.Conn }

func (c passConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c passConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c passConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}
