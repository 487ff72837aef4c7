//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/launch"
	"github.com/bgcmd/bgcmd/internal/testkit"
)

// TestE2EPostgresStoreByDSN: with BGCMD_DB (or --db) every command, and the
// detached supervisors they start, use the PostgreSQL database: jobs run,
// settle and are read back, no SQLite file appears in the home, the DSN
// never shows in a supervisor's argv or environment, and `bgcmd sql` on it
// is read-only (exit 2, as on SQLite).
func TestE2EPostgresStoreByDSN(t *testing.T) {
	t.Parallel()
	dsn := testkit.PostgresDB(t)
	h := newHome(t)
	h.env = append(h.env, "BGCMD_DB="+dsn)

	id := h.start(fixture(t, "exit-with.sh"), "3")
	h.bgcmd("wait", id) // exits with the job's code
	st := h.status(id)
	require.Equal(t, "exited", st["state"])
	require.Equal(t, 3.0, st["exit_code"])
	require.Contains(t, h.ok("output", id), "exiting with 3")

	// A running job: its detached supervisor holds it in PostgreSQL.
	gate := filepath.Join(h.root, "gate")
	long := h.start(fixture(t, "wait-for-file.sh"), gate, "0")
	t.Cleanup(func() { h.bgcmd("kill", "--signal", "KILL", long) })
	var job struct {
		SupervisorPID int `json:"supervisor_pid"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "status", long)), &job))
	require.NotZero(t, job.SupervisorPID)
	for _, f := range []string{"cmdline", "environ"} {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(job.SupervisorPID) + "/" + f)
		require.NoError(t, err)
		require.NotContains(t, string(b), dsn, "the supervisor's %s", f)
		require.NotContains(t, string(b), "bgcmd_test_", "the supervisor's %s", f)
	}
	// The lean bgcmd and bgcmd-supervisor are built without PostgreSQL:
	// the lean bgcmd hands the run to bgcmd-full, which supervises a
	// PostgreSQL store's jobs with itself.
	full := filepath.Join(filepath.Dir(binary), launch.FullName)
	exe, err := os.Readlink("/proc/" + strconv.Itoa(job.SupervisorPID) + "/exe")
	require.NoError(t, err)
	require.Equal(t, full, exe, "the supervisor of a PostgreSQL store's job")
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	h.ok("wait", long)
	require.Equal(t, "exited", h.status(long)["state"])

	// So it does when --db, among run's own flags, names the store (the
	// supervisor bgcmd starts while it initialises, before it parses them).
	byFlag := *h
	byFlag.env = slices.DeleteFunc(slices.Clone(h.env), func(e string) bool { return strings.HasPrefix(e, "BGCMD_DB=") })
	gate = filepath.Join(h.root, "gate2")
	long2 := strings.TrimSpace(byFlag.ok("run", "--db", dsn, "--", fixture(t, "wait-for-file.sh"), gate, "0"))
	t.Cleanup(func() { h.bgcmd("kill", "--signal", "KILL", long2) })
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "status", long2)), &job))
	exe, err = os.Readlink("/proc/" + strconv.Itoa(job.SupervisorPID) + "/exe")
	require.NoError(t, err)
	require.Equal(t, full, exe, "the supervisor of a job run with --db")
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	h.ok("wait", long2)
	require.Equal(t, "exited", h.status(long2)["state"])
	require.NoFileExists(t, filepath.Join(h.dir, "bgcmd.db"))

	// --db wins over BGCMD_DB; an empty home's SQLite file was never made.
	other := testkit.PostgresDB(t)
	require.Contains(t, h.ok("list"), id)
	out := h.ok("--db", other, "list")
	require.NotContains(t, out, id, "--db named another, empty database")
	require.NotContains(t, out, long)
	require.NoFileExists(t, filepath.Join(h.dir, "bgcmd.db"))

	require.Equal(t, "state,n\nexited,3\n", h.ok("sql", "--csv", "SELECT state, COUNT(*) AS n FROM jobs GROUP BY state"))
	for _, q := range []string{"DELETE FROM jobs", "update jobs set state = 'killed'", "DROP VIEW refusal_log"} {
		r := h.bgcmd("sql", q)
		require.Equal(t, 2, r.code, q)
		require.Contains(t, r.stderr, "sql is read-only: PostgreSQL refused the write", q)
	}
	require.Equal(t, "exited", h.peekState(id), "nothing was written")
	r := h.bgcmd("sql", "--timeout", "1s", "SELECT pg_sleep(60)")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "time limit")

	// Retention on PostgreSQL: the read jobs go, the database is vacuumed
	// and its size reported.
	out = h.ok("prune", "--state", "exited", "--vacuum")
	require.Contains(t, out, "vacuumed the database (now ")
	require.NotContains(t, out, "(now ?)")
	require.Equal(t, "n\n0\n", h.ok("sql", "--csv", "SELECT COUNT(*) AS n FROM jobs"))
}
