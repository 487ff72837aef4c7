//go:build linux

package artifacts

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestOpenFileOpensAsOsOpenDoes checks the reader's open against what
// os.Open promises: the file's bytes, through a symbolic link too; a
// descriptor closed on exec and blocking; a missing file an error that is
// fs.ErrNotExist and names the path.
func TestOpenFileOpensAsOsOpenDoes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.log")
	require.NoError(t, os.WriteFile(path, []byte("hello\n"), 0o600))
	require.NoError(t, os.Symlink(path, filepath.Join(dir, "link")))
	for _, p := range []string{path, filepath.Join(dir, "link")} {
		f, err := openFile(p)
		require.NoError(t, err)
		got, err := io.ReadAll(f)
		require.NoError(t, err)
		require.Equal(t, "hello\n", string(got))
		fdFlags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
		require.NoError(t, err)
		require.NotZero(t, fdFlags&unix.FD_CLOEXEC, "the descriptor must not leak into a child")
		fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
		require.NoError(t, err)
		require.Zero(t, fl&unix.O_NONBLOCK)
		require.Equal(t, unix.O_RDONLY, fl&unix.O_ACCMODE)
		require.NoError(t, f.Close())
	}
	_, err := openFile(filepath.Join(dir, "missing.log"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, filepath.Join(dir, "missing.log"))
}
