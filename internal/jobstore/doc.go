// Package jobstore is bgcmd's store, on SQLite or PostgreSQL: opening and
// migrating the database, job rows, compare-and-set transitions with one
// job_events row each, the per-session counters, history queries, refusals
// and retention.
//
// All SQL of the project lives here. The database is one file in WAL mode
// shared by many processes (every detached supervisor is one): writes go
// through a single connection per process with immediate transactions and a
// busy timeout, reads through a small pool, and migrations run under a file
// lock. Times are stored as fixed-width RFC 3339 UTC text, so they sort.
//
// A postgres:// DSN (Options.DSN) puts the same schema in a PostgreSQL
// database shared by several hosts (open_postgres.go): the statements are
// the same text on both backends, and what differs is in dialect.go and
// pgconn.go. Write transactions are serialised there by one advisory lock,
// taken in BEGIN's round trip, as SQLite serialises them by its write lock.
// The schema's triggers NOTIFY the other hosts of every transition and kill
// request when its transaction commits; one listening connection per store
// (notify_postgres.go: WatchEvents, WatchKill) wakes the waiters of this
// process, which then read the rows.
//
// Built with the tag bgcmd_lean, as bgcmd's lean binaries are (make build:
// bgcmd and bgcmd-supervisor), the package leaves out the PostgreSQL
// driver (open_postgres.go, pgconn.go, listen_pgx.go) and the migrations
// (migrate.go, goose), whose packages both processes of every `bgcmd run`
// would otherwise initialise at their start: it then opens SQLite stores at
// its own schema version only (lean_build.go), CanOpen says which, and a
// store it cannot open is refused with an error wrapping ErrLeanBuild.
//
// sql.ErrNoRows becomes bgcmd.ErrNotFound; a transition that finds the job
// in another state returns an error wrapping bgcmd.ErrInvalidTransition.
package jobstore
