package jobstore

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/bgcmd/bgcmd/migrations"
)

// ChainBackfillVersion is the goose version of the Go migration that chains
// existing rows, for the external tests.
var ChainBackfillVersion = chainBackfillVersion

// GoMigrations are the store's migrations written in Go, for the external
// tests that drive goose themselves.
var GoMigrations = goMigrations

// RemoveChainBenchStore removes the million-event store the chain benchmark
// built, if it did.
func RemoveChainBenchStore() {
	if chainMillionPath != "" {
		os.RemoveAll(filepath.Dir(chainMillionPath))
	}
}

// OpenRawPostgres opens the PostgreSQL database dsn names with the store's
// SQL dialect ("?" placeholders), for tests that look under the store.
func OpenRawPostgres(ctx context.Context, dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg)}), nil
}

// CountedCountersSQL is the SELECT that counts a session's counters from
// jobs, for the benchmark that sets it beside session_counters.
const CountedCountersSQL = countedCountersSQL

// WriterLockKey is the advisory lock PostgreSQL write transactions take.
const WriterLockKey = writerLockKey

// MigrateDownTo migrates the database at path down to version, as a store
// last opened by an older bgcmd has it.
func MigrateDownTo(ctx context.Context, path string, version int64) error {
	return withProvider(path, func(p *goose.Provider) error {
		_, err := p.DownTo(ctx, version)
		return err
	})
}

// MigrateUpTo migrates the database at path up to version, as an older
// bgcmd left it (a new file gets the schema of that version).
func MigrateUpTo(ctx context.Context, path string, version int64) error {
	return withProvider(path, func(p *goose.Provider) error {
		_, err := p.UpTo(ctx, version)
		return err
	})
}

// withProvider runs do with a goose provider of the store's migrations on
// the database at path.
func withProvider(path string, do func(*goose.Provider) error) error {
	db, err := openDB(path, DefaultBusyTimeout, false, false, 1, walAutocheckpoint)
	if err != nil {
		return err
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, db.DB, migrations.FS,
		goose.WithDisableGlobalRegistry(true), goose.WithGoMigrations(goMigrations()...))
	if err != nil {
		return err
	}
	return do(p)
}

// SetLockWithBegin chooses whether PostgreSQL write transactions take the
// write lock in BEGIN's round trip (the default) or in a statement of their
// own, for the benchmark comparing the two; it returns the restore.
func SetLockWithBegin(on bool) func() {
	was := lockWithBegin
	lockWithBegin = on
	return func() { lockWithBegin = was }
}
