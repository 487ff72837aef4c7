//go:build bgcmd_supervisor

package jobstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// This file is the store as the supervisor binary (cmd/bgcmd-supervisor,
// built with the tag bgcmd_supervisor) links it: SQLite stores its host
// has already opened, without the PostgreSQL driver and without the
// migrations (goose), whose packages would otherwise be initialised at
// every supervisor's start, on the path each `bgcmd run` waits for.
// bgcmd itself, and every host program built without the tag, has both:
// it supervises the jobs of a PostgreSQL store with its own binary, and a
// store is migrated by the host that opens it before any supervisor does.

// errNoPostgres is what opening a PostgreSQL store in this build says.
var errNoPostgres = errors.New("this supervisor binary is built without PostgreSQL " +
	"(bgcmd starts the supervisors of a PostgreSQL store from its own binary; " +
	"build with make build, or remove bgcmd-supervisor)")

// CanOpen says whether this build opens the store the DSN dsn names (""
// for SQLite): here, only SQLite ones.
func CanOpen(dsn string) error {
	if dsn != "" {
		return fmt.Errorf("open store %s: %w", redactDSN(dsn), errNoPostgres)
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

// migrate refuses: a supervisor opens only a store its host migrated, so
// a store at another schema version was migrated (or emptied) by another
// bgcmd since.
func migrate(ctx context.Context, db *sqlx.DB, path string) error {
	current, err := appliedVersion(ctx, db)
	if err != nil {
		current = 0
	}
	return fmt.Errorf("open store %s: its schema is at version %d, and this supervisor, which does not migrate, knows version %d: "+
		"run the bgcmd of this build (any command that writes migrates the store), or upgrade bgcmd and bgcmd-supervisor together",
		path, current, latestVersion(sqliteDialect))
}
