package webui_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
)

// The download is the banked bytes, exactly, checked against their sha256.
func TestDownloadServesTheBankedBytes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.xssJob()
	resp := f.authed("/jobs/" + id + "/download?stream=stdout")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, strings.Join(xssLines, "\n")+"\n", string(got))
	sum := sha256.Sum256(got)
	require.Equal(t, hex.EncodeToString(sum[:]), resp.Header.Get("X-Content-SHA256"))
	require.Equal(t, "application/octet-stream", resp.Header.Get("Content-Type"))
	require.Contains(t, resp.Header.Get("Content-Disposition"), "attachment")
}

// An artifact changed after banking (same size, other bytes) is refused
// with an error page, and none of its bytes are served.
func TestTamperedArtifactIsNotServed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.xssJob()
	arts, err := f.store.Artifacts(context.Background(), id)
	require.NoError(t, err)
	var art bgcmd.Artifact
	for _, a := range arts {
		if a.Stream == bgcmd.Stdout {
			art = a
		}
	}
	path := (&artifacts.Store{Dir: filepath.Join(f.home, "artifacts")}).Path(art.SHA256)
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	forged := []byte(strings.Replace(string(orig), "pwned", "FORGE", 1))
	require.Len(t, forged, len(orig))
	require.NoError(t, os.Chmod(path, 0o600))
	require.NoError(t, os.WriteFile(path, forged, 0o600))

	resp := f.authed("/jobs/" + id + "/download?stream=stdout")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	require.NotContains(t, string(body), "FORGE", "the forged bytes were served")
	require.Contains(t, string(body), "does not match")
	require.Contains(t, resp.Header.Get("Content-Type"), "text/html")

	// A truncated artifact too.
	require.NoError(t, os.WriteFile(path, orig[:10], 0o600))
	resp = f.authed("/jobs/" + id + "/download?stream=stdout")
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	require.NotContains(t, string(body), string(orig[:10]))
}

// A running job has nothing banked to download yet: 409, no bytes.
func TestDownloadOfARunningJobIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	gate := filepath.Join(f.root, "gate")
	id := f.start([]string{f.fixturePath("wait-for-file.sh"), gate, "0"}, runnerOpts())
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600); f.await(id) })
	resp := f.authed("/jobs/" + id + "/download?stream=stdout")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.NotContains(t, string(body), "waiting")
}

// A banked file removed by hand: the output page and the download say the
// output is lost (410), rather than showing an empty log.
func TestMissingArtifactIsGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.xssJob()
	arts, err := f.store.Artifacts(context.Background(), id)
	require.NoError(t, err)
	for _, a := range arts {
		if a.Stream == bgcmd.Stdout {
			require.NoError(t, os.Remove((&artifacts.Store{Dir: filepath.Join(f.home, "artifacts")}).Path(a.SHA256)))
		}
	}
	for _, path := range []string{"/jobs/" + id + "/output", "/jobs/" + id + "/download"} {
		body := f.page(path, http.StatusGone)
		require.Contains(t, body, "missing", path)
	}
}
