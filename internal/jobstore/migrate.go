//go:build !bgcmd_lean

package jobstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"

	"github.com/bgcmd/bgcmd/migrations"
)

// chainBackfillVersion is the goose version of the Go migration that chains
// the rows recorded before the chain existed. It runs after the SQL
// migrations that add the chain's columns (00008_chain.sql) and rebuild the
// jobs table for the queue (00009_queue.sql).
var chainBackfillVersion = migrations.GoVersions[0]

// migrate brings the SQLite database db (the store at path) to the newest
// migration.
func migrate(ctx context.Context, db *sqlx.DB, path string) error {
	p, err := goose.NewProvider(goose.DialectSQLite3, db.DB, migrations.FS,
		goose.WithDisableGlobalRegistry(true), goose.WithGoMigrations(goMigrations()...))
	if err != nil {
		return fmt.Errorf("open store %s: load migrations: %w", path, err)
	}
	if _, err := p.GetDBVersion(ctx); err != nil {
		return describeOpenError(path, err)
	}
	if err := runMigrations(ctx, p, path); err != nil {
		return err
	}
	return keepUserVersion(ctx, db, path)
}

// runMigrations applies p's pending migrations; name is the store in
// messages. A database migrated by a newer bgcmd is refused untouched.
func runMigrations(ctx context.Context, p *goose.Provider, name string) error {
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("open store %s: read the schema version: %w", name, err)
	}
	sources := p.ListSources()
	known := sources[len(sources)-1].Version
	if current > known {
		return fmt.Errorf("open store %s: schema version %d is newer than this bgcmd knows (%d): upgrade bgcmd, or use another --home", name, current, known)
	}
	if current == known {
		return nil
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("open store %s: migrate: %w", name, err)
	}
	return nil
}

// keepUserVersion sets the SQLite file's user_version to the version its
// migrations reached (see 00019_user_version.sql and SchemaCurrent).
func keepUserVersion(ctx context.Context, db *sqlx.DB, path string) error {
	v, err := appliedVersion(ctx, db)
	if err != nil {
		return fmt.Errorf("open store %s: read the schema version: %w", path, err)
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		return fmt.Errorf("open store %s: keep the schema version in the header: %w", path, describeWriteError(err))
	}
	// The header SchemaCurrent reads is the file's: copy the log into it
	// now, as far as no reader needs it (a later checkpoint does the rest).
	_, _ = db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	return nil
}

// goMigrations are the migrations written in Go, registered with the goose
// provider beside the embedded SQL ones.
func goMigrations() []*goose.Migration {
	return []*goose.Migration{
		goose.NewGoMigration(chainBackfillVersion, &goose.GoFunc{RunTx: backfillChain}, nil),
	}
}

// backfillChain chains every row not chained yet, in the order the rows were
// recorded (by time; an event before a refusal at the same instant; events
// by seq), from the current head on.
func backfillChain(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT kind, seq, id FROM (
		SELECT 0 AS kind, seq, '' AS id, at FROM job_events WHERE chain_seq IS NULL
		UNION ALL
		SELECT 1 AS kind, 0 AS seq, id, at FROM refusals WHERE chain_seq IS NULL)
		ORDER BY at, kind, seq, id`)
	if err != nil {
		return fmt.Errorf("chain existing rows: %w", err)
	}
	type pending struct {
		kind int
		seq  int64
		id   string
	}
	var todo []pending
	for rows.Next() {
		var p pending
		if err := rows.Scan(&p.kind, &p.seq, &p.id); err != nil {
			rows.Close()
			return fmt.Errorf("chain existing rows: %w", err)
		}
		todo = append(todo, p)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("chain existing rows: %w", err)
	}
	for _, p := range todo {
		if p.kind == 0 {
			err = chainEvent(ctx, tx, p.seq)
		} else {
			err = chainRefusal(ctx, tx, p.id)
		}
		if err != nil {
			return fmt.Errorf("chain existing rows: %w", err)
		}
	}
	return nil
}
