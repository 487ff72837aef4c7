package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/atomicfile"
)

func TestWriteReplacesTheFileAndLeavesNoTemporary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "record.json")
	require.NoError(t, atomicfile.Write(path, []byte("old")))
	require.NoError(t, atomicfile.Write(path, []byte("new")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "new", string(got))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
}

func TestWriteIntoAMissingDirectoryFailsNamingThePath(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gone", "record.json")
	require.ErrorContains(t, atomicfile.Write(path, []byte("x")), path)
}

func TestReplaceReplacesTheFileAndLeavesNoTemporary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.json")
	require.NoError(t, atomicfile.Replace(path, []byte("old")))
	require.NoError(t, atomicfile.Replace(path, []byte("new")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "new", string(got))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
	require.ErrorContains(t, atomicfile.Replace(filepath.Join(dir, "gone", "x"), nil), filepath.Join(dir, "gone", "x"))
}
