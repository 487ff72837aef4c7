package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunsOneAtATimeKeepTheLogBounded: `bgcmd run` after `bgcmd run`, each
// left alone until its supervisor has ended, keeps the store's write-ahead
// log bounded, because each supervisor closes the store last, which copies
// the log into the database and empties it. The CLI leaves its connections
// to the end of its process; a supervisor that did the same would leave
// the log to a process that rebuilds its index at open and counts none of
// its frames as copied, and the log would grow by every run (each open
// reading all of it).
func TestRunsOneAtATimeKeepTheLogBounded(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	const bound = 512 << 10 // a few runs' writes; twelve runs write more
	wal := filepath.Join(h.dir, "bgcmd.db-wal")
	for i := range 12 {
		var job struct {
			ID            string `json:"id"`
			SupervisorPID int    `json:"supervisor_pid"`
		}
		// Under the race detector a process waits a second at its exit:
		// the run would still hold its connection when its supervisor
		// closes, and the supervisor would not be the last to close.
		out := h.ok("env:GORACE=atexit_sleep_ms=0", "--json", "run", "--", fixture(t, "exit-with.sh"), "0")
		require.NoError(t, json.Unmarshal([]byte(out), &job))
		require.NotZero(t, job.SupervisorPID, "run %d: %+v", i, job)
		eventually(t, "the supervisor to end", func() bool { return isZombie(job.SupervisorPID) })
		fi, err := os.Stat(wal)
		require.NoError(t, err)
		require.Less(t, fi.Size(), int64(bound), "after run %d the log was left holding its writes, not emptied", i)
	}
	require.Equal(t, "settled\n12\n", h.ok("sql", "--csv", "SELECT COUNT(*) AS settled FROM jobs WHERE state = 'exited'"),
		"every run settled, and what the log held reached the database")
}
