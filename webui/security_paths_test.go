package webui_test

import (
	"context"
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// An artifact row whose sha256 is a path (a tampered store) never leads
// the view out of the artifact store: no page or download serves the file
// it points at.
func TestArtifactNameCannotEscapeTheStore(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	passwd, err := os.ReadFile("/etc/passwd")
	require.NoError(t, err)
	j := &bgcmd.Job{Argv: []string{"/usr/bin/true"}, Exe: "/usr/bin/true", Cwd: "/"}
	require.NoError(t, f.store.Create(ctx, j))
	zero := 0
	evil := "../../../../../../../../../../../../etc/passwd"
	_, err = f.store.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &zero,
		Artifacts: []bgcmd.Artifact{{Stream: bgcmd.Stdout, SHA256: evil, Bytes: int64(len(passwd))}}})
	require.NoError(t, err)
	for _, path := range []string{"/jobs/" + j.ID + "/output", "/jobs/" + j.ID + "/output?tail=5",
		"/jobs/" + j.ID + "/download", "/jobs/" + j.ID + "/follow"} {
		resp := f.authed(path)
		body := readAll(t, resp)
		require.NotContains(t, body, "root:", "GET %s served /etc/passwd", path)
		if path != "/jobs/"+j.ID+"/follow" {
			require.Equal(t, http.StatusInternalServerError, resp.StatusCode, path)
			require.Contains(t, body, "malformed sha256")
		}
	}
}
