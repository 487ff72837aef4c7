package jobstore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

// seedPrunable creates n settled, read jobs, each with its own stdout
// artifact.
func seedPrunable(t *testing.T, s *Store, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		j := &bgcmd.Job{Session: "a", Argv: []string{"/bin/true"}, Exe: "/bin/true", Cwd: "/",
			Timeout: time.Minute, KillGrace: time.Second, MaxOutputBytes: 1 << 20}
		require.NoError(t, s.Create(ctx, j))
		_, err := s.Settle(ctx, SettleParams{ID: j.ID, To: bgcmd.StateExited,
			Artifacts: []bgcmd.Artifact{{Stream: bgcmd.Stdout, SHA256: fmt.Sprintf("%064x", i), Bytes: 1}}})
		require.NoError(t, err)
		_, err = s.MarkSeen(ctx, j.ID)
		require.NoError(t, err)
	}
}

// autocheckpoint is the writer connection's wal_autocheckpoint.
func autocheckpoint(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	require.NoError(t, s.w.GetContext(context.Background(), &n, "PRAGMA wal_autocheckpoint"))
	return n
}

func TestPruneCheckpointsRarelyWhileItsBatchesRunAndRestoresTheWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "bgcmd.db"), Host: "test-host"})
	require.NoError(t, err)
	defer s.Close()
	seedPrunable(t, s, 25)
	require.Equal(t, 0, autocheckpoint(t, s), "a store with a read pool checkpoints in the background")

	var during []int
	var paused []int32
	res, err := s.PruneEach(ctx, PruneParams{Session: "a", BatchSize: 10}, func([]UnreferencedArtifact) {
		during = append(during, autocheckpoint(t, s))
		paused = append(paused, s.ckpt.paused.Load())
	})
	require.NoError(t, err)
	require.Len(t, res.Jobs, 25)
	require.Equal(t, []int{bulkAutocheckpoint, bulkAutocheckpoint, bulkAutocheckpoint}, during,
		"between batches the writer checkpoints every 16 MiB")
	require.Equal(t, []int32{1, 1, 1}, paused, "and the background checkpoints wait")
	require.Zero(t, s.ckpt.paused.Load(), "until the prune is over")
	require.Equal(t, 0, autocheckpoint(t, s), "after the prune, in the background again")
	var busy, frames, done int
	require.NoError(t, s.w.QueryRowxContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &done))
	require.Equal(t, frames, done, "the log is checkpointed")
}

func TestAPruneThatFailsMidwayRestoresTheWriter(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), "bgcmd.db"), Host: "test-host"})
	require.NoError(t, err)
	defer s.Close()
	seedPrunable(t, s, 25)

	ctx, cancel := context.WithCancel(context.Background())
	res, err := s.PruneEach(ctx, PruneParams{Session: "a", BatchSize: 10}, func([]UnreferencedArtifact) { cancel() })
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, res.Jobs, 10, "the batch before the failure is deleted and reported")
	require.Equal(t, 0, autocheckpoint(t, s), "a failed prune leaves the writer as it found it")
}
