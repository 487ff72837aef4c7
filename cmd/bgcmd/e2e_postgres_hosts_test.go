//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/testkit"
)

// TestE2ETwoHostsShareOnePostgresStore: two homes (two hosts: their own
// host ids, their own supervisors and files) on one PostgreSQL database.
// Host A starts jobs; host B sees them with A's host, leaves A's running
// job alone when it reconciles, reads and verifies the output A banked
// (kept in the database for the other hosts), kills A's running job by
// request (A's supervisor stops it), and prunes A's settled jobs together
// with their stored output.
func TestE2ETwoHostsShareOnePostgresStore(t *testing.T) {
	t.Parallel()
	dsn := testkit.PostgresDB(t)
	a, b := newHome(t), newHome(t)
	a.env = append(a.env, "BGCMD_DB="+dsn)
	b.env = append(b.env, "BGCMD_DB="+dsn)
	hostID := func(h *home) string {
		id, err := os.ReadFile(filepath.Join(h.dir, "host"))
		require.NoError(t, err)
		return strings.TrimSpace(string(id))
	}

	done := a.start(fixture(t, "exit-with.sh"), "3")
	a.bgcmd("wait", done)
	gate := filepath.Join(a.root, "never")
	long := a.start(fixture(t, "wait-for-file.sh"), gate, "0")
	t.Cleanup(func() { a.bgcmd("kill", "--signal", "KILL", long) })
	b.ok("list") // B's host id exists from here on
	idA, idB := hostID(a), hostID(b)
	require.NotEqual(t, idA, idB)

	// B sees A's jobs as A's.
	st := b.status(long)
	require.Equal(t, "running", st["state"])
	require.Equal(t, idA, st["host_id"])
	require.Contains(t, b.ok("list", "--host", idA), long)
	require.NotContains(t, b.ok("list", "--host", idB), long)

	// B's reconcile never judges A's supervisors by B's processes.
	b.ok("reconcile")
	require.Equal(t, "running", b.peekState(long))

	// A's banked output, read, searched and verified on B.
	require.Equal(t, "out: exiting with 3\n", b.ok("output", done, "--raw"))
	require.Equal(t, "exited", b.status(done)["state"])
	b.ok("verify", done)

	// B kills A's job: the request reaches A's supervisor through the store.
	out := b.ok("kill", "--wait", long)
	require.Contains(t, out, "killed")
	require.Equal(t, "killed", a.peekState(long))

	// Both hosts count the same history.
	count := "SELECT COUNT(*) AS n FROM jobs WHERE state IN ('exited', 'killed')"
	require.Equal(t, "n\n2\n", a.ok("sql", "--csv", count))
	require.Equal(t, a.ok("sql", "--csv", count), b.ok("sql", "--csv", count))

	// B prunes A's settled jobs and the output the store kept for them.
	require.NotEqual(t, "n\n0\n", b.ok("sql", "--csv", "SELECT COUNT(*) AS n FROM artifact_blobs"))
	out = b.ok("prune", "--older-than", "0s", "--include-unread")
	require.Contains(t, out, "deleted 2 job(s)")
	require.Equal(t, "n\n0\n", a.ok("sql", "--csv", "SELECT COUNT(*) AS n FROM jobs"))
	require.Equal(t, "n\n0\n", a.ok("sql", "--csv", "SELECT COUNT(*) AS n FROM artifact_blobs"))
}
