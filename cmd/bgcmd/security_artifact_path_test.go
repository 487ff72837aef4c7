package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// An artifact row whose sha256 is a path (a store edited by hand) never
// leads a reader out of the artifact store: output, status and verify name
// the malformed record and serve nothing of the file it points at.
func TestAnArtifactRecordCannotPointOutOfTheStore(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "exit-with.sh"), "0")
	require.Equal(t, 0, h.bgcmd("wait", id).code)
	passwd, err := os.ReadFile("/etc/passwd")
	require.NoError(t, err)

	db, err := sql.Open("sqlite", filepath.Join(h.dir, "bgcmd.db"))
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE artifacts SET sha256 = '../../../../../../../../../../etc/passwd', bytes = ?
		WHERE job_id = ? AND stream = 'stdout'`, len(passwd), id)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	for _, args := range [][]string{{"output", id}, {"output", id, "--raw"}, {"output", id, "--tail", "3"},
		{"output", id, "--grep", "root"}, {"status", id}, {"follow", id}} {
		r := h.bgcmd(args...)
		require.NotContains(t, r.stdout, "root:", "%v served /etc/passwd", args)
		require.NotContains(t, r.stderr, "root:", args)
	}
	r := h.bgcmd("output", id)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "malformed sha256")
	r = h.bgcmd("verify", id)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stdout+r.stderr, "malformed sha256")
}
