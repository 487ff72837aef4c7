package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunsOneAtATimeKeepTheLogBounded: `bgcmd run` after `bgcmd run`, each
// left alone until its supervisor has ended, keeps the store's write-ahead
// log bounded, because the supervisor closes the store last, which copies
// the log into the database and empties it. The CLI leaves its connections
// to the end of its process; a supervisor that did the same would leave
// the log to a process that rebuilds its index at open and counts none of
// its frames as copied, and the log would grow by every run (each open
// reading all of it).
//
// Each job waits for a gate the test opens once its run has exited, so
// that its supervisor closes last, as it does for any job that outlives
// its CLI. (A job that settles before its CLI has exited leaves the log to
// the next close that is last: 2 of 20 `bgcmd run --json -- /bin/true` did,
// measured.)
func TestRunsOneAtATimeKeepTheLogBounded(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	const bound = 512 << 10 // a few runs' writes; eight runs write more
	wal := filepath.Join(h.dir, "bgcmd.db-wal")
	for i := range 8 {
		gate := filepath.Join(h.root, "gate-"+strconv.Itoa(i))
		var job struct {
			ID            string `json:"id"`
			SupervisorPID int    `json:"supervisor_pid"`
		}
		require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "run", "--", fixture(t, "wait-for-file.sh"), gate)), &job))
		require.NotZero(t, job.SupervisorPID, "run %d: %+v", i, job)
		require.NoError(t, os.WriteFile(gate, nil, 0o600)) // the run has exited
		eventually(t, "the supervisor to end", func() bool { return isZombie(job.SupervisorPID) })
		fi, err := os.Stat(wal)
		require.NoError(t, err)
		require.Less(t, fi.Size(), int64(bound), "after run %d the log was left holding its writes, not emptied", i)
	}
	require.Equal(t, "settled\n8\n", h.ok("sql", "--csv", "SELECT COUNT(*) AS settled FROM jobs WHERE state = 'exited'"),
		"every run settled, and what the log held reached the database")
}
