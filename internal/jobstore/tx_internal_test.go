package jobstore

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAWriteThatFailsLeavesNothingAndFreesTheLock: a SQLite write
// transaction runs on the writer's connection between statements of its
// own (sqliteTx). Whatever ends its body early, an error, a panic or a
// cancelled context, it must roll back what the body wrote and release the
// write lock: another process's write then goes through at once, and so
// does this store's next one.
func TestAWriteThatFailsLeavesNothingAndFreesTheLock(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		body func(ctx context.Context, cancel context.CancelFunc, tx wtx) error
		want error
	}{
		{"an error", func(ctx context.Context, _ context.CancelFunc, tx wtx) error {
			return boom
		}, boom},
		{"a panic", func(ctx context.Context, _ context.CancelFunc, tx wtx) error {
			panic(boom)
		}, nil},
		{"a cancelled context", func(ctx context.Context, cancel context.CancelFunc, tx wtx) error {
			cancel()
			_, err := tx.ExecContext(ctx, `INSERT INTO session_counters (session) VALUES ('written')`)
			return err
		}, context.Canceled},
	} {
		for _, one := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: ", pool", true: ", one connection"}[one], func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				path := filepath.Join(t.TempDir(), "bgcmd.db")
				s, err := Open(ctx, Options{Path: path, Host: "test-host", OneConnection: one})
				require.NoError(t, err)
				defer s.Close()

				txCtx, cancel := context.WithCancel(ctx)
				defer cancel()
				err = func() (err error) {
					defer func() {
						if p := recover(); p != nil {
							err = p.(error)
						}
					}()
					return s.inTx(txCtx, func(tx wtx) error {
						if _, err := tx.ExecContext(txCtx, `INSERT INTO session_counters (session) VALUES ('rolled back')`); err != nil {
							return err
						}
						return tc.body(txCtx, cancel, tx)
					})
				}()
				require.Error(t, err)
				if tc.want != nil {
					require.ErrorIs(t, err, tc.want)
				}

				var rows int
				require.NoError(t, s.r.GetContext(ctx, &rows, `SELECT COUNT(*) FROM session_counters`))
				require.Zero(t, rows, "the body's write was rolled back")

				// Another process's write takes the lock at once: a short
				// busy timeout fails if the transaction were still open.
				other, err := Open(ctx, Options{Path: path, Host: "test-host", BusyTimeout: 200 * time.Millisecond})
				require.NoError(t, err)
				defer other.Close()
				require.NoError(t, other.Create(ctx, benchJob()), "the write lock was released")
				require.NoError(t, s.Create(ctx, benchJob()), "the writer's connection is not left in a transaction")
			})
		}
	}
}
