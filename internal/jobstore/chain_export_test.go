package jobstore

import (
	"context"
	"os"
	"path/filepath"

	"github.com/pressly/goose/v3"

	"github.com/bgcmd/bgcmd/migrations"
)

// ChainBackfillVersion is the goose version of the Go migration that chains
// existing rows, for the external tests.
var ChainBackfillVersion = chainBackfillVersion

// RemoveChainBenchStore removes the million-event store the chain benchmark
// built, if it did.
func RemoveChainBenchStore() {
	if chainMillionPath != "" {
		os.RemoveAll(filepath.Dir(chainMillionPath))
	}
}

// MigrateDownTo migrates the database at path down to version, as a store
// last opened by an older bgcmd has it.
func MigrateDownTo(ctx context.Context, path string, version int64) error {
	db, err := openDB(path, DefaultBusyTimeout, false, false, 1)
	if err != nil {
		return err
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, db.DB, migrations.FS,
		goose.WithDisableGlobalRegistry(true), goose.WithGoMigrations(goMigrations()...))
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, version)
	return err
}
