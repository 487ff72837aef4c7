//go:build !bgcmd_lean

package jobstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/bgcmd/bgcmd/internal/hostid"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/bgcmd/bgcmd/migrations"
)

// CanOpen says whether this build opens the store the DSN dsn names (""
// for SQLite): this one opens both kinds (a lean build's, with the tag
// bgcmd_lean, only SQLite ones).
func CanOpen(dsn string) error { return nil }

// openPostgres opens the store on the PostgreSQL database opts.DSN names,
// migrating it (under goose's PostgreSQL advisory session lock, so that
// hosts opening it at once migrate it once) unless opts.ReadOnly. A
// read-only store's sessions are read-only on the server
// (default_transaction_read_only), so PostgreSQL itself refuses every
// write whatever runs on them.
func openPostgres(ctx context.Context, opts Options) (*Store, error) {
	name := redactDSN(opts.DSN)
	cfg, err := pgx.ParseConfig(opts.DSN)
	if err != nil {
		return nil, fmt.Errorf("open store %s: the DSN does not parse (see the PostgreSQL connection URI format): %s", name, scrubPassword(err.Error(), opts.DSN))
	}
	if opts.ReadOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	// A write waits for the store's write lock at most BusyTimeout, as
	// SQLite's busy timeout bounds the wait for its write lock.
	cfg.RuntimeParams["lock_timeout"] = strconv.FormatInt(max(opts.BusyTimeout.Milliseconds(), 1), 10)
	// A store shared by hosts keeps banked output in the database too, so
	// any of them reads any job's output.
	s := &Store{host: opts.Host, hostID: opts.HostID, shareArtifacts: true,
		now: opts.Now, readOnly: opts.ReadOnly, d: postgresDialect, dsn: opts.DSN, notices: newNotices(cfg)}
	if opts.Path != "" {
		if s.path, err = filepath.Abs(opts.Path); err != nil {
			return nil, fmt.Errorf("open store %s: %w", opts.Path, err)
		}
	}
	if s.hostID == "" && s.path != "" && !opts.ReadOnly {
		id, err := hostid.Load(filepath.Dir(s.path))
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", name, err)
		}
		s.hostID = id.ID
	}
	open := func(conns int) *sqlx.DB {
		db := sqlx.NewDb(sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg)}), "pgx")
		db.SetMaxOpenConns(conns)
		db.SetMaxIdleConns(conns)
		return db
	}
	s.r = open(opts.ReadConns)
	if err := s.r.PingContext(ctx); err != nil {
		s.r.Close()
		return nil, describePostgresOpenError(name, err)
	}
	if opts.ReadOnly {
		// A catalog lookup, which needs no privilege on the tables: an
		// audit role may read the views only.
		var ok bool
		err := s.r.GetContext(ctx, &ok, `SELECT to_regclass('goose_db_version') IS NOT NULL AND to_regclass('jobs') IS NOT NULL`)
		if err != nil || !ok {
			s.r.Close()
			if err == nil {
				err = errors.New("no jobs table")
			}
			return nil, fmt.Errorf("open store %s read-only: it holds no bgcmd schema (run a bgcmd command that writes with this --db first): %w", name, err)
		}
		s.w = s.r
		return s, nil
	}
	// The writer: one connection, as on SQLite; its transactions take the
	// store's advisory write lock (dialect.lockWriter).
	s.w = open(1)
	if err := migratePostgres(ctx, cfg, name); err != nil {
		s.r.Close()
		s.w.Close()
		return nil, err
	}
	if err := s.adoptLegacyRows(ctx); err != nil {
		s.r.Close()
		s.w.Close()
		return nil, fmt.Errorf("open store %s: %w", name, err)
	}
	return s, nil
}

// migratePostgres brings the database to the newest PostgreSQL migration.
func migratePostgres(ctx context.Context, cfg *pgx.ConnConfig, name string) error {
	// The migrations run on a plain pgx pool: their SQL is PostgreSQL's own.
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	if current, err := appliedVersion(ctx, sqlx.NewDb(db, "pgx")); err == nil && current == latestVersion(postgresDialect) {
		return nil // the common case: already migrated, no lock, no provider
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("open store %s: migration lock: %w", name, err)
	}
	sub, err := fs.Sub(migrations.PostgresFS, "postgres")
	if err != nil {
		return fmt.Errorf("open store %s: load migrations: %w", name, err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub,
		goose.WithDisableGlobalRegistry(true), goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("open store %s: load migrations: %w", name, err)
	}
	return runMigrations(ctx, p, name)
}

// describePostgresOpenError names the database and says how to recover
// from the usual reasons it cannot be reached.
func describePostgresOpenError(name string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "3D000":
			return fmt.Errorf("open store %s: the database does not exist (create it: createdb NAME, or name another in --db): %w", name, err)
		case "28P01", "28000":
			return fmt.Errorf("open store %s: the server refused the user (check the user and password in --db or BGCMD_DB): %w", name, err)
		}
	}
	return fmt.Errorf("open store %s: cannot reach the PostgreSQL server (is it running? check host and port in --db or BGCMD_DB): %w", name, err)
}
