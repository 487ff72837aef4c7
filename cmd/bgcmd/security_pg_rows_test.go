//go:build linux

package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/testkit"
)

// TestAQueuedJobRunsOnlyWhatItsHostsPolicyChecked: on a shared PostgreSQL
// store each host keeps its own policy, but the holder of a queued job had
// run the job as its row said at dispatch. Anyone who can write the shared
// database (another host, or a job anywhere that reaches the DSN) thereby
// ran any program on this host, outside its allowlist. Here "another
// host" is a plain connection to the database that rewrites a queued
// job's argv to /bin/sh: the job settles start_failed, saying its row
// changed, and /bin/sh never runs.
func TestAQueuedJobRunsOnlyWhatItsHostsPolicyChecked(t *testing.T) {
	t.Parallel()
	dsn := testkit.PostgresDB(t)
	h := newHome(t)
	h.env = append(h.env, "BGCMD_DB="+dsn)
	h.ok("list") // migrates the store
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	mark := filepath.Join(t.TempDir(), "queued-job-ran-sh")

	gate := filepath.Join(h.root, "gate")
	first := h.start(fixture(t, "wait-for-file.sh"), gate, "0")
	t.Cleanup(func() { h.bgcmd("kill", "--signal", "KILL", first) })
	queued := strings.TrimSpace(h.ok("run", "--after", first, "--", fixture(t, "exit-with.sh"), "0"))
	require.Regexp(t, uuidRE, queued)
	require.Equal(t, "queued", h.peekState(queued))

	argv, _ := json.Marshal([]string{"/bin/sh", "-c", "echo pwned > " + mark})
	res, err := db.Exec(`UPDATE jobs SET argv = $1, exe = '/bin/sh' WHERE id = $2 AND state = 'queued'`, string(argv), queued)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.EqualValues(t, 1, n)

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	h.bgcmd("wait", first)
	h.bgcmd("wait", queued)
	st := h.status(queued)
	require.Equal(t, "start_failed", st["state"], "status %v", st)
	require.Contains(t, st["error"], "its row's argv changed while it was queued")
	require.NoFileExists(t, mark, "the queued job ran /bin/sh, which a row written by another host named")
}
