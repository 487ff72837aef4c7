// Package jobstore is the read side of bgcmd's job store, for hosts and
// audit tooling: a job's row and its event timeline, pages of history,
// the per-session counters, the live event feed, read-only SQL over the
// documented views, and the verification of the evidence chain.
//
// A Reader opens the database read-only: SQLite itself refuses every write
// through it, so a host can read history while supervisors record it. The
// writes (creating, claiming, settling, killing, pruning) belong to the
// runner, which banks a job's output before its terminal row is written;
// they live in an internal package so that no host can settle a job
// without its evidence. Hosts start, wait for and kill jobs through
// package runner, whose Options.Home names the same home.
//
// The schema itself is a public interface: docs/schema.md documents the
// tables and views that Query reads.
package jobstore
