package webui_test

import (
	"context"
	"database/sql"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

// homeTree lists every file and directory under dir.
func homeTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	}))
	return out
}

// The view writes nothing in the home, not even to show output banked on
// another host that the store holds: before, a GET of such output took the
// artifacts lock (creating artifacts/ and its .lock when absent) and
// banked the blob into the home's artifacts. It still serves that output.
// (The SQLite files a reader opens are not counted: SQLite's own.)
func TestTheViewWritesNothingInTheHome(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.xssJob()
	arts, err := f.store.Artifacts(context.Background(), id)
	require.NoError(t, err)
	i := slices.IndexFunc(arts, func(a bgcmd.Artifact) bool { return a.Stream == bgcmd.Stdout })
	require.GreaterOrEqual(t, i, 0)
	out := arts[i]
	artDir := filepath.Join(f.home, "artifacts")
	content, err := os.ReadFile(filepath.Join(artDir, out.SHA256[:2], out.SHA256))
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(artDir))
	// The runner's own work in the home (a settled job's directory kept
	// for the next start) ends before the snapshots.
	require.NoError(t, f.r.Close(context.Background()))

	unchanged := func(before []string) {
		t.Helper()
		require.Equal(t, before, homeTree(t, f.home), "the read-only view wrote in the home")
	}
	before := homeTree(t, f.home)
	resp := f.authed("/jobs/" + id + "/output")
	readAll(t, resp)
	require.Equal(t, http.StatusGone, resp.StatusCode, "output lost here and not in the store")
	unchanged(before)

	// The store holds the blob, as one shared between hosts does.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(f.home, "bgcmd.db")+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO artifact_blobs (sha256, bytes, chunks, created_at) VALUES (?, ?, 1, '2026-01-01T00:00:00Z')`,
		out.SHA256, len(content))
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO artifact_chunks (sha256, seq, data) VALUES (?, 0, ?)`, out.SHA256, content)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	before = homeTree(t, f.home)
	for range 2 { // the second from what the first fetched
		resp = f.authed("/jobs/" + id + "/output")
		body := readAll(t, resp)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		require.Contains(t, body, "&lt;script&gt;")
		unchanged(before)
	}
}
