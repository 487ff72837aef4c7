package jobstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

func shaOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestBlobsRoundTripInChunksAndAreStoredOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	for _, size := range []int{0, 1, jobstore.ChunkSize, 2*jobstore.ChunkSize + 7} {
		data := bytes.Repeat([]byte{byte(size)}, size)
		sha := shaOf(data)
		require.NoError(t, s.PutBlob(ctx, sha, int64(size), bytes.NewReader(data)))
		// Stored once: a second put reads nothing.
		require.NoError(t, s.PutBlob(ctx, sha, int64(size), bytes.NewReader(nil)))
		var got bytes.Buffer
		n, err := s.ReadBlob(ctx, sha, &got)
		require.NoError(t, err)
		require.Equal(t, int64(size), n)
		require.True(t, bytes.Equal(data, got.Bytes()), "size %d", size)
	}
	_, err := s.ReadBlob(ctx, shaOf([]byte("never stored")), &bytes.Buffer{})
	require.ErrorIs(t, err, jobstore.ErrNoBlob)
}

func TestTornBlobIsAnErrorNotShortOutput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	s := openTest(t, jobstore.Options{Path: path})
	data := bytes.Repeat([]byte("z"), 2*jobstore.ChunkSize)
	sha := shaOf(data)
	require.NoError(t, s.PutBlob(ctx, sha, int64(len(data)), bytes.NewReader(data)))
	db := openRaw(t, path)
	_, err := db.Exec(`DELETE FROM artifact_chunks WHERE sha256 = ? AND seq = 1`, sha)
	require.NoError(t, err)
	_, err = s.ReadBlob(ctx, sha, &bytes.Buffer{})
	require.ErrorContains(t, err, "1 of 2 chunks")
}

func TestUnreferencedBlobsGoReferencedOnesStay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := openTest(t, jobstore.Options{Now: func() time.Time { return now }})
	kept, stray := []byte("kept\n"), []byte("stray\n")
	for _, b := range [][]byte{kept, stray} {
		require.NoError(t, s.PutBlob(ctx, shaOf(b), int64(len(b)), bytes.NewReader(b)))
	}
	j := newJob("s")
	require.NoError(t, s.Create(ctx, j))
	_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: new(int),
		Artifacts: []bgcmd.Artifact{{Stream: bgcmd.Stdout, SHA256: shaOf(kept), Bytes: int64(len(kept))}}})
	require.NoError(t, err)

	n, err := s.DeleteStrayBlobs(ctx, now.Add(-time.Minute))
	require.NoError(t, err)
	require.Zero(t, n, "a stray younger than the cutoff may be one being banked")
	n, err = s.DeleteUnreferencedBlobs(ctx, []string{shaOf(kept), shaOf(stray)})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	has, err := s.HasBlob(ctx, shaOf(kept))
	require.NoError(t, err)
	require.True(t, has)
	has, err = s.HasBlob(ctx, shaOf(stray))
	require.NoError(t, err)
	require.False(t, has)
}

// A host stores a job's output before the settle that names it commits. A
// prune on another host in between, of an older job with the same output,
// must not take the content from under it: the settle would then name
// output no host can read.
func TestPruneBetweenAnotherHostsStoreAndSettleKeepsTheContent(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		clock := func() time.Time { return now }
		path := filepath.Join(t.TempDir(), "bgcmd.db")
		hostA := openTest(t, jobstore.Options{Path: path, Now: clock})
		hostB := openTest(t, jobstore.Options{Path: path, Now: clock})
		out := []byte("the same output twice\n")
		sha := shaOf(out)
		art := []bgcmd.Artifact{{Stream: bgcmd.Stdout, SHA256: sha, Bytes: int64(len(out))}}

		old := newJob("s")
		require.NoError(t, hostA.Create(ctx, old))
		require.NoError(t, hostA.PutBlob(ctx, sha, int64(len(out)), bytes.NewReader(out)))
		_, err := hostA.Settle(ctx, jobstore.SettleParams{ID: old.ID, To: bgcmd.StateExited, ExitCode: new(int), Artifacts: art})
		require.NoError(t, err)

		// Host A's next job writes the same output and stores it (already
		// there), and has not settled yet when host B prunes the old job.
		now = now.Add(time.Hour)
		next := newJob("s")
		require.NoError(t, hostA.Create(ctx, next))
		now = now.Add(time.Second)
		require.NoError(t, hostA.PutBlob(ctx, sha, int64(len(out)), bytes.NewReader(out)))
		res, err := hostB.Prune(ctx, jobstore.PruneParams{States: []bgcmd.State{bgcmd.StateExited}, IncludeUnread: true})
		require.NoError(t, err)
		require.Len(t, res.Jobs, 1, "the old job is pruned")
		_, err = hostB.DeleteUnreferencedBlobs(ctx, []string{sha})
		require.NoError(t, err)
		_, err = hostB.DeleteStrayBlobs(ctx, now.Add(time.Hour))
		require.NoError(t, err)

		_, err = hostA.Settle(ctx, jobstore.SettleParams{ID: next.ID, To: bgcmd.StateExited, ExitCode: new(int), Artifacts: art})
		require.NoError(t, err)
		var got bytes.Buffer
		_, err = hostB.ReadBlob(ctx, sha, &got)
		require.NoError(t, err, "the settled job's output is still in the store")
		require.Equal(t, out, got.Bytes())

		// Once no running job can be about to name it, an unreferenced
		// blob goes: prune the second job too.
		_, err = hostB.Prune(ctx, jobstore.PruneParams{States: []bgcmd.State{bgcmd.StateExited}, IncludeUnread: true})
		require.NoError(t, err)
		n, err := hostB.DeleteUnreferencedBlobs(ctx, []string{sha})
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
}
