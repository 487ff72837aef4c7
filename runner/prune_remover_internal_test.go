package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// TestPruneRemovesAFileOnlyWhenNoRowNamesItUnderTheLock plays the race the
// remover's check is for: a job in another process banks output a pruned
// batch's rows named, after that batch committed and before its files are
// removed. The file stays, named by the new row. Output two pruned jobs
// shared, in two batches, goes once and is reported once.
func TestPruneRemovesAFileOnlyWhenNoRowNamesItUnderTheLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	path := filepath.Join(home, "bgcmd.db")
	st, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host"})
	require.NoError(t, err)
	defer st.Close()
	other, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host"})
	require.NoError(t, err)
	defer other.Close()
	r, err := New(ctx, Options{Store: st, Home: home, SkipReconcile: true})
	require.NoError(t, err)
	defer r.Close(ctx)

	bank := func(s *jobstore.Store, session, content string) string {
		sum := sha256.Sum256([]byte(content))
		sha := hex.EncodeToString(sum[:])
		p := r.arts.Path(sha)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		j := &bgcmd.Job{Session: session, Argv: []string{"/bin/true"}, Exe: "/bin/true", Cwd: "/",
			Timeout: time.Minute, KillGrace: time.Second, MaxOutputBytes: 1 << 20}
		require.NoError(t, s.Create(ctx, j))
		_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited,
			Artifacts: []bgcmd.Artifact{{Stream: bgcmd.Stdout, SHA256: sha, Bytes: int64(len(content))}}})
		require.NoError(t, err)
		_, err = s.MarkSeen(ctx, j.ID)
		require.NoError(t, err)
		return sha
	}
	again := bank(st, "old", "banked again\n")
	shared := bank(st, "old", "shared\n")
	require.Equal(t, shared, bank(st, "old", "shared\n"))
	own := bank(st, "old", "its own\n")

	rm := r.startRemover(ctx)
	batches := 0
	res, err := st.PruneEach(ctx, jobstore.PruneParams{Session: "old", BatchSize: 1}, func(files []jobstore.UnreferencedArtifact) {
		batches++
		if batches == 1 {
			require.Equal(t, again, files[0].SHA256)
			bank(other, "new", "banked again\n") // after the commit, before the removal
		}
		rm.add(files)
	})
	require.NoError(t, err)
	require.NoError(t, rm.finish())
	require.Len(t, res.Jobs, 4)
	require.Equal(t, 4, batches)
	require.Empty(t, res.Unreferenced, "left to the caller that removes the files")

	require.FileExists(t, r.arts.Path(again), "a row names it again")
	require.NoFileExists(t, r.arts.Path(shared))
	require.NoFileExists(t, r.arts.Path(own))
	require.ElementsMatch(t, []jobstore.UnreferencedArtifact{
		{SHA256: shared, Bytes: int64(len("shared\n"))}, {SHA256: own, Bytes: int64(len("its own\n"))}}, rm.gone,
		"each file that went, once")
	require.Equal(t, 2, rm.removed)
}
