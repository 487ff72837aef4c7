package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCaptureSummaryMatchesSummarizeOfTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 8))
	content := append(trickyText(100_000), invalidText(r, 100_000)...)
	content = append(content, 0xf0, 0x9f) // ends inside a sequence
	c, path := capture(t, dir, "out.log", content, 4093, defaultStride)
	live := c.Summary()
	require.NoError(t, c.Close())
	sum := c.Summary()
	require.Equal(t, live, sum)

	want, err := Summarize(path)
	require.NoError(t, err)
	require.Equal(t, want, sum)
	require.EqualValues(t, len(content), sum.Bytes)
	require.EqualValues(t, len(refChars(content)), sum.Chars)
	require.EqualValues(t, len(refLines(content)), sum.Lines)
	h := sha256.Sum256(content)
	require.Equal(t, hex.EncodeToString(h[:]), sum.SHA256)
	require.False(t, sum.Capped)
}

func TestCaptureCountsLinesWithAndWithoutFinalNewline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, tc := range []struct {
		content string
		lines   int64
	}{
		{"", 0}, {"\n", 1}, {"a", 1}, {"a\n", 1}, {"a\nb", 2}, {"a\n\n", 2}, {"\n\n\n", 3},
	} {
		c, _ := capture(t, dir, fmt.Sprintf("case%d.log", i), []byte(tc.content), 1, defaultStride)
		require.NoError(t, c.Close())
		require.Equal(t, tc.lines, c.Summary().Lines, "%q", tc.content)
	}
}

func TestCaptureCapLandingMidChunkKeepsExactlyTheCap(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.log")
	c, err := NewCapture(CaptureOptions{Path: path, Cap: 10_000})
	require.NoError(t, err)
	chunk := make([]byte, 3000)
	for i := range chunk {
		chunk[i] = byte('a' + i%26)
	}
	for i := 0; i < 3; i++ {
		n, err := c.Write(chunk)
		require.NoError(t, err)
		require.Equal(t, 3000, n)
	}
	n, err := c.Write(chunk)
	require.ErrorIs(t, err, ErrCapReached)
	require.Equal(t, 1000, n)
	n, err = c.Write(chunk)
	require.ErrorIs(t, err, ErrCapReached)
	require.Zero(t, n)
	n, err = c.Write([]byte("x"))
	require.ErrorIs(t, err, ErrCapReached)
	require.Zero(t, n)
	require.EqualValues(t, 10_000, c.Written())
	require.NoError(t, c.Close())

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, data, 10_000)
	want := append(append(append(append([]byte{}, chunk...), chunk...), chunk...), chunk[:1000]...)
	require.Equal(t, want, data)
	sum := c.Summary()
	require.True(t, sum.Capped)
	require.EqualValues(t, 10_000, sum.Bytes)
	h := sha256.Sum256(want)
	require.Equal(t, hex.EncodeToString(h[:]), sum.SHA256)
}

func TestCaptureOutputOfExactlyTheCapIsNotCapped(t *testing.T) {
	t.Parallel()
	c, err := NewCapture(CaptureOptions{Path: filepath.Join(t.TempDir(), "out.log"), Cap: 8})
	require.NoError(t, err)
	n, err := c.Write([]byte("12345678"))
	require.NoError(t, err)
	require.Equal(t, 8, n)
	n, err = c.Write(nil)
	require.NoError(t, err, "an empty write drops nothing")
	require.Zero(t, n)
	require.False(t, c.Summary().Capped)
	n, err = c.Write([]byte("9"))
	require.ErrorIs(t, err, ErrCapReached)
	require.Zero(t, n)
	require.NoError(t, c.Close())
	require.True(t, c.Summary().Capped)
}

func TestCaptureTailKeepsTheLastBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(9, 10))
	c, err := NewCapture(CaptureOptions{Path: filepath.Join(dir, "out.log"), TailSize: 100})
	require.NoError(t, err)
	var all []byte
	require.Empty(t, c.Tail())
	for i := 0; i < 300; i++ {
		p := make([]byte, r.IntN(250))
		for j := range p {
			p[j] = byte(r.IntN(256))
		}
		_, err := c.Write(p)
		require.NoError(t, err)
		all = append(all, p...)
		require.Equal(t, all[max(0, len(all)-100):], c.Tail(), "after write %d", i)
	}
	require.NoError(t, c.Close())

	d, err := NewCapture(CaptureOptions{Path: filepath.Join(dir, "default.log")})
	require.NoError(t, err)
	big := trickyText(3 * DefaultTailSize)
	writeChunks(t, d, big, 1000)
	require.Equal(t, big[len(big)-DefaultTailSize:], d.Tail())
	require.NoError(t, d.Close())
}

func TestCaptureWrittenIsReadableWhileWriting(t *testing.T) {
	t.Parallel()
	c, err := NewCapture(CaptureOptions{Path: filepath.Join(t.TempDir(), "out.log")})
	require.NoError(t, err)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := int64(0)
		for {
			select {
			case <-done:
				return
			default:
			}
			w := c.Written()
			if w < last {
				panic("Written went backwards")
			}
			last = w
			_ = c.Tail()
		}
	}()
	writeChunks(t, c, trickyText(1<<20), 4096)
	close(done)
	wg.Wait()
	require.EqualValues(t, len(trickyText(1<<20)), c.Written())
	require.NoError(t, c.Close())
}

func TestCaptureRefusesBadOptionsAndAnExistingLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := NewCapture(CaptureOptions{})
	require.ErrorContains(t, err, "empty path")
	_, err = NewCapture(CaptureOptions{Path: filepath.Join(dir, "a"), Cap: -1})
	require.ErrorContains(t, err, "negative cap -1")
	_, err = NewCapture(CaptureOptions{Path: filepath.Join(dir, "a"), TailSize: -5})
	require.ErrorContains(t, err, "negative tail size -5")
	_, err = NewCapture(CaptureOptions{Path: filepath.Join(dir, "missing", "a")})
	require.ErrorIs(t, err, os.ErrNotExist)

	existing := filepath.Join(dir, "existing.log")
	require.NoError(t, os.WriteFile(existing, []byte("keep me"), 0o600))
	_, err = NewCapture(CaptureOptions{Path: existing})
	require.ErrorIs(t, err, os.ErrExist)
	data, err := os.ReadFile(existing)
	require.NoError(t, err)
	require.Equal(t, "keep me", string(data))
}

func TestCaptureCloseIsFinalAndIdempotent(t *testing.T) {
	t.Parallel()
	c, err := NewCapture(CaptureOptions{Path: filepath.Join(t.TempDir(), "out.log")})
	require.NoError(t, err)
	_, err = c.Write([]byte("hello\n"))
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	_, err = c.Write([]byte("more"))
	require.ErrorIs(t, err, os.ErrClosed)
	require.EqualValues(t, 6, c.Summary().Bytes)
	require.Equal(t, []byte("hello\n"), c.Tail())
}

func TestCaptureIndexEqualsARebuildFromTheLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(11, 12))
	content := append(trickyText(300_000), invalidText(r, 300_000)...)
	for _, stride := range []int64{16, 1000, defaultStride} {
		c, path := capture(t, dir, fmt.Sprintf("stride%d.log", stride), content, 777, stride)
		require.NoError(t, c.Close())
		_, recs, err := scanLog(bytesReader(content), stride, false)
		require.NoError(t, err)
		idx, err := os.ReadFile(path + IndexSuffix)
		require.NoError(t, err)
		require.Equal(t, append(encodeHeader(stride), recs...), idx, "stride %d", stride)
		require.Len(t, recs, len(content)/int(stride)*recordSize)
	}
}
