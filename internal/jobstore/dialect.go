package jobstore

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	"github.com/jmoiron/sqlx"
)

// dialect is what differs between the two backends, SQLite and
// PostgreSQL; every other statement of the store is the same text on both
// (placeholders are written "?" and the PostgreSQL connection rebinds
// them, see pgconn.go).
type dialect struct {
	// postgres is true for a store on PostgreSQL.
	postgres bool
}

var (
	sqliteDialect   = dialect{}
	postgresDialect = dialect{postgres: true}
)

// name is the backend's name for messages.
func (d dialect) name() string {
	if d.postgres {
		return "PostgreSQL"
	}
	return "SQLite"
}

// hasRollup reports whether the store keeps the charts' hourly roll-up
// (job_hours, kept by the store's writes on SQLite); PostgreSQL answers the charts
// from jobs.
func (d dialect) hasRollup() bool { return !d.postgres }

// eventsFirstJoin joins jobs to job_events read first, in seq order: on
// SQLite a CROSS JOIN, which keeps the tables in the order written (the
// planner, without statistics, would start from an index of jobs, such as
// the session's, and read every job of it); PostgreSQL's planner weighs
// the seq range with its statistics.
func (d dialect) eventsFirstJoin() string {
	if d.postgres {
		return "JOIN"
	}
	return "CROSS JOIN"
}

// writerLockKey is the PostgreSQL advisory lock every write transaction
// takes first ("bgcmd" in ASCII): see lockWriter.
const writerLockKey int64 = 0x6267636d64

// lockWriter serialises the write transactions of every process sharing
// the store. SQLite does it with its write lock (the writer's transactions
// are BEGIN IMMEDIATE); on PostgreSQL the transaction takes one
// transaction-scoped advisory lock before anything else, held until it
// commits or rolls back. What relies on it: the hash chain (one head, each
// row linked to the one before), job_events.seq growing in commit order
// (a consumer of the feed resumes after the last seq it saw, so a smaller
// seq must never commit after a larger one is visible), and the queue's
// dispatch, which acts on the running counts it read in the same
// transaction.
//
// The lock is taken in the same round trip as BEGIN (pgConn.BeginTx, for
// a context marked by writerTx): lockWriter then has nothing left to do.
func (d dialect) lockWriter(ctx context.Context, tx *sqlx.Tx) error {
	if !d.postgres || ctx.Value(writerTxKey{}) != nil {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, writerLockKey); err != nil {
		return fmt.Errorf("take the store's write lock: %w", err)
	}
	return nil
}

// writerTx marks ctx so that a PostgreSQL write transaction begun with it
// holds the store's write lock from its BEGIN on.
func (d dialect) writerTx(ctx context.Context) context.Context {
	if !d.postgres || !lockWithBegin {
		return ctx
	}
	return withWriterTx(ctx)
}

// writerTxKey marks the context of a write transaction (Store.inTx): the
// connection begins it already holding the store's write lock.
type writerTxKey struct{}

// withWriterTx returns ctx marked as a write transaction's.
func withWriterTx(ctx context.Context) context.Context {
	return context.WithValue(ctx, writerTxKey{}, true)
}

// lockWithBegin takes the write lock in BEGIN's round trip (false: in a
// statement of its own, as before; kept for the benchmark that compares).
var lockWithBegin = true

// snapshotTx are the options of a read transaction that sees one
// snapshot throughout (VerifyChain's walk): SQLite's read transaction
// does; PostgreSQL's needs REPEATABLE READ.
func (d dialect) snapshotTx() *sql.TxOptions {
	if d.postgres {
		return &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}
	}
	return &sql.TxOptions{ReadOnly: true}
}

// idMatch is the condition matching a job id by a prefix (first argument)
// or a suffix (second argument) of hex digits and dashes. SQLite's GLOB is
// case-sensitive and walks the primary key for a prefix; PostgreSQL's LIKE
// does the same on a "C" collation column.
func (d dialect) idMatch() string {
	if d.postgres {
		return `id LIKE ? || '%' OR id LIKE '%' || ?`
	}
	return `id GLOB ? || '*' OR id GLOB '*' || ?`
}

// labelExists is the condition "the jobs row has label key ?" (and, with
// value, "whose value is ?").
func (d dialect) labelExists(value bool) string {
	each := `json_each(jobs.labels)`
	if d.postgres {
		each = `jsonb_each_text(jobs.labels::jsonb)`
	}
	cond := "EXISTS (SELECT 1 FROM " + each + " AS l WHERE l.key = ?"
	if value {
		cond += " AND l.value = ?"
	}
	return cond + ")"
}

// msBetween is the milliseconds from the stored time from to the stored
// time to, as a floating-point expression.
func (d dialect) msBetween(from, to string) string {
	if d.postgres {
		return fmt.Sprintf("(EXTRACT(EPOCH FROM (%s::timestamptz - %s::timestamptz)) * 1000.0)::float8", to, from)
	}
	return fmt.Sprintf("((julianday(%s) - julianday(%s)) * 86400000.0)", to, from)
}

// walAutocheckpoint is the pages of log after which a commit on a SQLite
// connection checkpoints (see openDB). bulkAutocheckpoint is the writer's
// while a prune deletes its batches (see bulkWrites). walSizeLimit is the
// journal_size_limit, in bytes: what a log that starts again is cut back
// to, as large as a prune's series lets the log grow between its
// checkpoints, so that the series does not cut and grow the file at each.
const (
	walAutocheckpoint  = 256
	bulkAutocheckpoint = 4096
	walSizeLimit       = bulkAutocheckpoint * 4096
)

// bulkWrites readies the writer db for a long series of large
// transactions, Prune's batches, and returns what ends that. On SQLite the
// batches rewrite the same pages again and again (deleting a batch's
// artifact rows touches leaves all over the index by content hash), so a
// checkpoint every 1 MiB of log would write those pages back and fsync
// the database after every batch: for the series the writer checkpoints
// every 16 MiB instead, and once more at the end, passively (it waits for
// no reader), so that the log left for the next process to recover is
// short again; then the writer's own wal_autocheckpoint, restore, is back.
// PostgreSQL needs none of this.
func (d dialect) bulkWrites(ctx context.Context, db *sqlx.DB, restore int) (end func() error, err error) {
	if d.postgres {
		return func() error { return nil }, nil
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", bulkAutocheckpoint)); err != nil {
		return nil, err
	}
	return func() error {
		ctx := context.WithoutCancel(ctx)
		_, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", restore))
		if err == nil {
			_, err = db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		}
		return err
	}, nil
}

// vacuum compacts the store after a large prune.
func (d dialect) vacuum(ctx context.Context, db *sqlx.DB) error {
	if d.postgres {
		// Every table of the store; VACUUM runs outside a transaction.
		_, err := db.ExecContext(ctx, `VACUUM (ANALYZE) jobs, job_events, artifacts, refusals, hook_runs, chain_pruned`)
		return err
	}
	if _, err := db.ExecContext(ctx, `VACUUM`); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// IsPostgresDSN reports whether dsn names a PostgreSQL database (a
// postgres:// or postgresql:// URL): such a DSN selects the PostgreSQL
// backend, anything else is refused by Open, and an empty one means SQLite.
func IsPostgresDSN(dsn string) bool {
	l := strings.ToLower(strings.TrimSpace(dsn))
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// redactDSN is dsn as it may be printed: without its password.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(the PostgreSQL DSN given)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// scrubPassword removes the password of dsn, as written in it, from msg (an
// error that quotes a DSN it could not parse).
func scrubPassword(msg, dsn string) string {
	rest, ok := strings.CutPrefix(dsn, "postgres://")
	if !ok {
		rest, _ = strings.CutPrefix(dsn, "postgresql://")
	}
	userinfo, _, ok := strings.Cut(rest, "@")
	if !ok {
		return msg
	}
	if _, pw, ok := strings.Cut(userinfo, ":"); ok && pw != "" {
		msg = strings.ReplaceAll(msg, pw, "xxxxx")
	}
	return msg
}
