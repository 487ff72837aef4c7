// Package migrations embeds bgcmd's goose SQL migrations. They are
// append-only: a released migration is never edited, only followed by a new
// one, because the schema is a public interface for audit tooling (see
// docs/schema.md).
package migrations

import "embed"

// FS holds the numbered *.sql migrations, applied in order by jobstore.Open.
//
//go:embed *.sql
var FS embed.FS

// GoVersions are the goose versions held by migrations written in Go (the
// store registers them beside the SQL files): the SQL files skip these
// numbers. Version 10 chains the rows recorded before the chain existed.
var GoVersions = []int64{10}
