package jobstore

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
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

// WriterLockKey is the advisory lock PostgreSQL write transactions take.
const WriterLockKey = writerLockKey
