package artifacts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
)

// chunkReader returns r's bytes in reads of random sizes up to max.
type chunkReader struct {
	r   io.Reader
	rnd *rand.Rand
	max int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	return c.r.Read(p[:min(len(p), 1+c.rnd.IntN(c.max))])
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// waitWritten polls c until it holds n bytes, or fails at a deadline.
func waitWritten(t *testing.T, c *Capture, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.Written() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the capture holds %d bytes, want %d", c.Written(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// readResult is what a ReadFrom returned.
type readResult struct {
	n   int64
	err error
}

// readingPipe returns a new capture that a goroutine fills with ReadFrom
// from a pipe, the log's path, the pipe's write end, and where the
// ReadFrom's result arrives.
func readingPipe(t *testing.T) (*Capture, string, *os.File, <-chan readResult) {
	path := filepath.Join(t.TempDir(), "out.log")
	c, err := NewCapture(CaptureOptions{Path: path})
	require.NoError(t, err)
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { pr.Close(); pw.Close() })
	done := make(chan readResult, 1)
	go func() {
		n, err := c.ReadFrom(pr)
		done <- readResult{n, err}
	}()
	return c, path, pw, done
}

func TestCaptureReadFromKeepsWhatWriteKeeps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(13, 14))
	content := append(trickyText(400_000), invalidText(r, 400_000)...)
	content = append(content, 0xe2, 0x82) // ends inside a sequence
	viaWrite, _ := capture(t, dir, "write.log", content, 4096, 1000)
	require.NoError(t, viaWrite.Close())
	for i, src := range []io.Reader{
		iotest.OneByteReader(bytes.NewReader(content[:20_000])),
		&chunkReader{r: bytes.NewReader(content), rnd: rand.New(rand.NewPCG(1, 2)), max: 5000},
		&chunkReader{r: bytes.NewReader(content), rnd: rand.New(rand.NewPCG(3, 4)), max: 3 * batchSize},
		iotest.DataErrReader(bytes.NewReader(content)), // the last bytes come with io.EOF
	} {
		want := content
		if i == 0 {
			want = content[:20_000]
		}
		path := filepath.Join(dir, fmt.Sprintf("read%d.log", i))
		c, err := newCapture(CaptureOptions{Path: path}, 1000)
		require.NoError(t, err)
		n, err := c.ReadFrom(src)
		require.NoError(t, err, "io.EOF ends a ReadFrom without an error")
		require.EqualValues(t, len(want), n)
		require.Equal(t, want[len(want)-DefaultTailSize:], c.Tail(), "source %d", i)
		require.NoError(t, c.Close())

		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, sha(want), sha(got), "source %d: the log holds the bytes in order", i)
		sum, err := Summarize(path)
		require.NoError(t, err)
		require.Equal(t, sum, c.Summary(), "source %d", i)
		_, recs, err := scanLog(bytesReader(want), 1000, false)
		require.NoError(t, err)
		idx, err := os.ReadFile(path + IndexSuffix)
		require.NoError(t, err)
		require.Equal(t, append(encodeHeader(1000), recs...), idx, "source %d", i)
		if i > 0 {
			require.Equal(t, viaWrite.Summary(), c.Summary(), "source %d", i)
		}
	}
}

func TestCaptureReadFromStopsExactlyAtTheCap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := trickyText(1_000_000)
	for _, tc := range []struct {
		cap    int64
		capped bool
	}{{300_001, true}, {int64(len(content)), false}, {1, true}} {
		path := filepath.Join(dir, fmt.Sprintf("cap%d.log", tc.cap))
		c, err := NewCapture(CaptureOptions{Path: path, Cap: tc.cap})
		require.NoError(t, err)
		src := &chunkReader{r: bytes.NewReader(content), rnd: rand.New(rand.NewPCG(5, 6)), max: 70_000}
		n, err := c.ReadFrom(src)
		require.Equal(t, tc.cap, n)
		if tc.capped {
			require.ErrorIs(t, err, ErrCapReached)
			_, err = c.ReadFrom(bytes.NewReader([]byte("more")))
			require.ErrorIs(t, err, ErrCapReached, "a capped capture takes nothing more")
		} else {
			require.NoError(t, err, "output of exactly the cap is not capped")
		}
		require.NoError(t, c.Close())
		require.Equal(t, tc.capped, c.Summary().Capped)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, sha(content[:tc.cap]), sha(got))
		require.Equal(t, sha(content[:tc.cap]), c.Summary().SHA256)
	}
}

// A ReadFrom waiting in a read holds bytes it has written but not yet
// handed to the hashing: Summary, Tail and Write in the meantime see them,
// in order.
func TestCaptureReadFromSharesItsPendingBytes(t *testing.T) {
	t.Parallel()
	c, path, pw, done := readingPipe(t)
	_, err := pw.Write([]byte("hello\n"))
	require.NoError(t, err)
	waitWritten(t, c, 6)
	sum := c.Summary() // while the ReadFrom waits for the next read
	require.EqualValues(t, 6, sum.Bytes)
	require.Equal(t, sha([]byte("hello\n")), sum.SHA256)
	require.Equal(t, []byte("hello\n"), c.Tail())

	_, err = c.Write([]byte("direct\n"))
	require.NoError(t, err)
	_, err = pw.Write([]byte("world\n"))
	require.NoError(t, err)
	waitWritten(t, c, 19)
	want := []byte("hello\ndirect\nworld\n")
	require.Equal(t, want, c.Tail())
	require.NoError(t, pw.Close())
	res := <-done
	require.NoError(t, res.err)
	require.EqualValues(t, 12, res.n, "ReadFrom counts what it read, not what Write wrote")
	require.NoError(t, c.Close())

	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, got)
	fromFile, err := Summarize(path)
	require.NoError(t, err)
	require.Equal(t, fromFile, c.Summary())
}

func TestCaptureClosedDuringAReadKeepsWhatWasWritten(t *testing.T) {
	t.Parallel()
	c, path, pw, done := readingPipe(t)
	_, err := pw.Write([]byte("abc"))
	require.NoError(t, err)
	waitWritten(t, c, 3)
	require.NoError(t, c.Close())
	require.EqualValues(t, 3, c.Summary().Bytes)
	require.Equal(t, sha([]byte("abc")), c.Summary().SHA256)

	_, err = pw.Write([]byte("late"))
	require.NoError(t, err)
	require.ErrorIs(t, (<-done).err, os.ErrClosed, "bytes read after Close are not written")
	require.NoError(t, pw.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, []byte("abc"), got)
}

func TestCaptureReadFromReportsAWriteError(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.log")
	c, err := NewCapture(CaptureOptions{Path: path})
	require.NoError(t, err)
	_, err = c.Write([]byte("first\n"))
	require.NoError(t, err)
	require.NoError(t, c.Err())
	require.NoError(t, c.f.Close()) // the log's descriptor fails under it

	n, err := c.ReadFrom(bytes.NewReader([]byte("second\n")))
	require.Error(t, err)
	require.Zero(t, n)
	require.Equal(t, err, c.Err(), "Err names the write error ReadFrom returned")
	require.ErrorContains(t, err, path, "the error names the log")
	_, err = c.ReadFrom(bytes.NewReader([]byte("third\n")))
	require.Equal(t, c.Err(), err, "every later read returns it")
	require.EqualValues(t, 6, c.Summary().Bytes)
}
