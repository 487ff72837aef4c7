package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// TestPruneDoesNotFollowASymlinkedArtifactDirectoryOutOfTheStore: an
// artifact store directory replaced by a symbolic link to a directory
// outside the store, holding a file named like the pruned artifact. Prune
// removes the artifact's row and never the file the link leads to.
func TestPruneDoesNotFollowASymlinkedArtifactDirectoryOutOfTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	j := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
	s := e.await(j.ID)
	arts := &artifacts.Store{Dir: filepath.Join(e.home, "artifacts")}
	banked := arts.Path(s.Stdout.SHA256)
	content, err := os.ReadFile(banked)
	require.NoError(t, err)

	outside := t.TempDir()
	victim := filepath.Join(outside, s.Stdout.SHA256)
	require.NoError(t, os.WriteFile(victim, content, 0o600))
	dir := filepath.Dir(banked)
	require.NoError(t, os.Rename(dir, dir+".moved"))
	require.NoError(t, os.Symlink(outside, dir))

	rep, err := e.r.Prune(ctx, jobstore.PruneParams{Session: s.Session})
	require.Len(t, rep.Jobs, 1, "the rows go: %v", err)
	require.FileExists(t, victim, "prune followed a symbolic link out of the artifact store")
}
