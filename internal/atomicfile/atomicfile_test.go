package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/atomicfile"
)

// Write and Replace alike replace the file whole, leave no temporary
// file behind, and fail naming the path when its directory is missing.
func TestWriteAndReplaceReplaceTheFileAndLeaveNoTemporary(t *testing.T) {
	t.Parallel()
	for name, write := range map[string]func(string, []byte) error{"Write": atomicfile.Write, "Replace": atomicfile.Replace} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "record.json")
			require.NoError(t, write(path, []byte("old")))
			require.NoError(t, write(path, []byte("new")))
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, "new", string(got))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "no temporary file is left behind")
			gone := filepath.Join(dir, "gone", "record.json")
			require.ErrorContains(t, write(gone, []byte("x")), gone)
		})
	}
}

// IsTemp names the temporary files Write and Replace make for a path, and
// nothing else: not the file itself, nor another file's temporary.
func TestIsTempNamesTheTemporaryFilesOfAPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.json")
	// A temporary file as a write interrupted before its rename leaves it.
	f, err := os.CreateTemp(dir, ".cache.json.tmp*")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.True(t, atomicfile.IsTemp(path, filepath.Base(f.Name())), f.Name())
	for _, name := range []string{"cache.json", ".cache.json.tmp", ".cache.json.tmp12a", ".other.json.tmp123",
		"cache.json.tmp123", ".cache.json.tmp123/x"} {
		require.False(t, atomicfile.IsTemp(path, name), name)
	}
}
