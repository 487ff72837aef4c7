package migrations

import "embed"

// PostgresFS holds the PostgreSQL migrations under postgres/, applied in
// order by jobstore.Open on a store chosen by a postgres:// DSN. They give
// the same tables, columns, indexes and views as the SQLite ones and carry
// the same version numbers for the same schema: the first, 00010, is the
// whole schema as of SQLite's version 10, and a later migration is added
// to both directories under one number.
//
//go:embed postgres/*.sql
var PostgresFS embed.FS
