//go:build bgcmd_lean

package jobstore

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// This file is the store as bgcmd's lean binaries link it (bgcmd-supervisor
// and bgcmd, built with the tag bgcmd_lean by make build): SQLite stores at
// its own schema version, without the PostgreSQL driver and without the
// migrations (goose), whose packages would otherwise be initialised at
// every start of both processes of a `bgcmd run`. What it cannot open, it
// refuses with an error wrapping ErrLeanBuild: a lean bgcmd then hands the
// command to bgcmd-full beside it, which has both, and bgcmd-full is the
// supervisor of a PostgreSQL store's jobs. Every host program built without
// the tag has both too.

// CanOpen says whether this build opens the store the DSN dsn names (""
// for SQLite): here, only SQLite ones.
func CanOpen(dsn string) error {
	if dsn != "" {
		return fmt.Errorf("open store %s: this build of bgcmd has no PostgreSQL driver: %w", redactDSN(dsn), ErrLeanBuild)
	}
	return nil
}

// openPostgres refuses, as CanOpen says: this build has no PostgreSQL
// driver.
func openPostgres(_ context.Context, opts Options) (*Store, error) {
	return nil, CanOpen(opts.DSN)
}

// pgCode is "": this build never sees a PostgreSQL error.
func pgCode(error) string { return "" }

// migrate refuses: this build opens only a store at its own schema
// version, which a bgcmd with the migrations (bgcmd-full, or any build
// without the tag) brings it to.
func migrate(ctx context.Context, db *sqlx.DB, path string) error {
	current, err := appliedVersion(ctx, db)
	if err != nil {
		current = 0
	}
	return fmt.Errorf("open store %s: its schema is at version %d and this build of bgcmd, which does not migrate, knows version %d: %w",
		path, current, latestVersion(sqliteDialect), ErrLeanBuild)
}
