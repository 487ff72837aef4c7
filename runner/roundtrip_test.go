package runner_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/runner"
)

// pageRaw reads a stream back in raw byte pages of random sizes.
func pageRaw(t *testing.T, e *env, id string, rng *mrand.Rand, want int) []byte {
	t.Helper()
	var got []byte
	for off := int64(0); len(got) < want; {
		limit := 1 + rng.Int64N(300_000)
		res, err := e.r.ReadOutput(context.Background(), id, bgcmd.Stdout,
			artifacts.Page{Offset: off, Limit: limit, Raw: true})
		require.NoError(t, err)
		require.Equal(t, off, res.Offset)
		require.LessOrEqual(t, int64(len(res.Data)), limit)
		got = append(got, res.Data...)
		if len(res.Data) == 0 {
			require.True(t, res.HasMore, "an empty page before the end only while the job runs")
		}
		off = res.NextOffset
	}
	return got
}

func TestThreeMegabytesOfRandomBytesPageBackExactlyWhileRunningAndAfterBanking(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	dir := t.TempDir()
	content := make([]byte, 3_000_000)
	_, err := rand.Read(content)
	require.NoError(t, err)
	input := filepath.Join(dir, "random.bin")
	require.NoError(t, os.WriteFile(input, content, 0o600))
	gate := filepath.Join(dir, "gate")
	// A real command prints the bytes, then keeps running until the gate.
	j := e.start([]string{"/bin/sh", "-c", `cat "$1"; while [ ! -e "$2" ]; do sleep 0.05; done`, "sh", input, gate},
		runner.StartOptions{})
	waitFor(t, "all bytes captured", func() bool {
		s, err := e.r.Status(context.Background(), j.ID)
		require.NoError(t, err)
		return s.Stdout.Bytes == int64(len(content))
	})
	rng := mrand.New(mrand.NewPCG(1, 2))
	live := pageRaw(t, e, j.ID, rng, len(content))
	require.True(t, bytes.Equal(content, live), "paged while running")
	st, err := e.r.Status(context.Background(), j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, st.State, "the first pass read the live log")

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	s := e.await(j.ID)
	require.Equal(t, bgcmd.StateExited, s.State)
	banked := pageRaw(t, e, j.ID, rng, len(content))
	require.True(t, bytes.Equal(content, banked), "paged after banking")
	sum := sha256.Sum256(banked)
	require.Equal(t, s.Stdout.SHA256, hex.EncodeToString(sum[:]), "the pages' sha256 is the artifact's")
}
