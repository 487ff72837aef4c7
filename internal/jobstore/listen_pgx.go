//go:build !bgcmd_lean

package jobstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// newNotices returns the listener of a PostgreSQL store connecting as cfg
// does, under its own application_name and in sessions that may LISTEN
// (never read-only: a read-only store watches too).
func newNotices(cfg *pgx.ConnConfig) *notices {
	cfg = cfg.Copy()
	cfg.RuntimeParams["application_name"] = ListenerApplicationName
	delete(cfg.RuntimeParams, "default_transaction_read_only")
	return &notices{
		connect: func(ctx context.Context) (listenConn, error) {
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				return nil, err
			}
			if _, err := conn.Exec(ctx, "LISTEN "+eventsChannel+"; LISTEN "+killChannel); err != nil {
				_ = conn.Close(context.WithoutCancel(ctx))
				return nil, err
			}
			return pgListenConn{conn}, nil
		},
		events: map[chan struct{}]struct{}{},
		kills:  map[string]map[chan struct{}]struct{}{},
	}
}

// pgListenConn is a listenConn on a pgx connection.
type pgListenConn struct{ c *pgx.Conn }

func (l pgListenConn) next(ctx context.Context) (string, string, error) {
	msg, err := l.c.WaitForNotification(ctx)
	if err != nil {
		return "", "", err
	}
	return msg.Channel, msg.Payload, nil
}

func (l pgListenConn) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = l.c.Close(ctx)
}
