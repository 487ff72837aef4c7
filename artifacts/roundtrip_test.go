package artifacts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRandomBytesRoundTripFromTheLiveLogAndAfterBanking(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := rand.New(rand.NewPCG(19, 20))
	content := make([]byte, 3<<20)
	for i := range content {
		content[i] = byte(r.Uint32())
	}
	jobDir := filepath.Join(home, "jobs", "j1")
	require.NoError(t, os.MkdirAll(jobDir, 0o755))
	path := filepath.Join(jobDir, "stdout.log")
	c, err := NewCapture(CaptureOptions{Path: path})
	require.NoError(t, err)
	for rest := content; len(rest) > 0; {
		k := min(len(rest), 1+r.IntN(64<<10))
		n, err := c.Write(rest[:k])
		require.NoError(t, err)
		require.Equal(t, k, n)
		rest = rest[k:]
	}
	pageSize := func() int64 { return 1 + r.Int64N(256<<10) }
	sha := func(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

	// Live: the job still runs (the capture is open).
	live := Source{Path: path}
	_, data := pageAll(t, live, Page{Raw: true}, pageSize)
	require.True(t, bytes.Equal(content, data), "live raw bytes differ")
	sum := c.Summary()
	require.Equal(t, sum.SHA256, sha(data))
	res, err := Read(live, Page{Offset: int64(len(content))})
	require.NoError(t, err)
	require.True(t, res.HasMore, "a live log always may have more")

	require.NoError(t, c.Close())
	store := &Store{Dir: filepath.Join(home, "artifacts")}
	banked, artifact, err := store.Bank(path, &sum)
	require.NoError(t, err)
	require.Equal(t, sum, banked)

	final := Source{Path: artifact, Final: true}
	_, data = pageAll(t, final, Page{Raw: true}, pageSize)
	require.True(t, bytes.Equal(content, data), "banked raw bytes differ")
	require.Equal(t, sum.SHA256, sha(data))
	_, data = pageAll(t, final, Page{Unit: UnitChars, Raw: true}, pageSize)
	require.True(t, bytes.Equal(content, data), "banked raw chars differ")
	_, data = pageAll(t, final, Page{Unit: UnitLines, Raw: true}, func() int64 { return 1 + r.Int64N(3000) })
	require.True(t, bytes.Equal(content, data), "banked raw lines differ")

	res, err = Read(final, Page{Unit: UnitChars})
	require.NoError(t, err)
	require.Equal(t, sum.Chars, res.TotalSize)
	res, err = Read(final, Page{Unit: UnitLines})
	require.NoError(t, err)
	require.Equal(t, sum.Lines, res.TotalSize)
}
