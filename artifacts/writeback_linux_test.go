//go:build linux

package artifacts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestALongLogCyclesThroughTwoWindowsOfCache writes five writeback windows
// of output through a Capture, making each window clean on disk before the
// next is written (as the writeback the capture starts does, given
// time), and checks with mincore that the page cache holds none of the
// windows two or more behind the end, all of the last, and that the log
// reads back whole.
func TestALongLogCyclesThroughTwoWindowsOfCache(t *testing.T) {
	const windows = 5
	dir := t.TempDir()
	var fs unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &fs))
	if fs.Type == unix.TMPFS_MAGIC {
		t.Skip("a tmpfs file's page cache is its storage: nothing can be dropped")
	}
	path := filepath.Join(dir, "out.log")
	c, err := NewCapture(CaptureOptions{Path: path})
	require.NoError(t, err)
	chunk := bytes.Repeat(logLines(), 1+(256<<10)/len(logLines()))[:256<<10]
	h := sha256.New()
	for range windows {
		for range writebackEvery / len(chunk) {
			_, err := c.Write(chunk)
			require.NoError(t, err)
			h.Write(chunk)
		}
		c.Summary() // the digester has reached the window's end
		require.NoError(t, c.f.Sync())
	}
	resident := residentPages(t, path, windows*writebackEvery)
	page := os.Getpagesize()
	perWindow := writebackEvery / page
	behind := 0
	for _, r := range resident[:(windows-2)*perWindow] {
		behind += r
	}
	last := 0
	for _, r := range resident[(windows-1)*perWindow:] {
		last += r
	}
	require.Zero(t, behind, "pages cached two or more windows behind the end of the log")
	require.Equal(t, perWindow, last, "pages of the last window cached")

	require.NoError(t, c.Close())
	want := hex.EncodeToString(h.Sum(nil))
	require.Equal(t, want, c.Summary().SHA256)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, int64(windows*writebackEvery), int64(len(got)))
	sum := sha256.Sum256(got)
	require.Equal(t, want, hex.EncodeToString(sum[:]))
}

// residentPages maps the first size bytes of path and returns, for each
// page, 1 when the page cache holds it and 0 when not (mincore).
func residentPages(t *testing.T, path string, size int) []int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	require.NoError(t, err)
	defer unix.Munmap(m)
	vec := make([]byte, (size+os.Getpagesize()-1)/os.Getpagesize())
	// x/sys has no wrapper for mincore on Linux.
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(size), uintptr(unsafe.Pointer(&vec[0])))
	require.Zero(t, errno, "mincore: %v", errno)
	out := make([]int, len(vec))
	for i, v := range vec {
		out[i] = int(v & 1)
	}
	return out
}
