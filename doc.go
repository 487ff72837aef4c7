// Package bgcmd holds the domain types every bgcmd package shares: job
// states, the job record, artifact references, counters, the status object
// and the sentinel errors callers branch on.
//
// bgcmd is a durable store and supervisor for background commands. Commands
// start as argv arrays under a strict policy (package policy), run under a
// supervisor (package runner), and every transition, artifact reference and
// finished-but-unread counter lives in SQLite (package jobstore). Output is
// banked and paged through an index (package artifacts); a read-only git
// toolset (package gittools) and the agent tool layer (package agenttools)
// sit on top. This package imports none of them.
package bgcmd
