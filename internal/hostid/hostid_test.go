package hostid

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestLoadCreatesOnePrivateIDAndKeepsIt(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	first, err := Load(home)
	require.NoError(t, err)
	_, err = uuid.Parse(first.ID)
	require.NoError(t, err)
	host, _ := os.Hostname()
	require.Equal(t, host, first.Name)
	fi, err := os.Stat(filepath.Join(home, FileName))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	again, err := Load(home)
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID)
	other, err := Load(t.TempDir())
	require.NoError(t, err)
	require.NotEqual(t, first.ID, other.ID, "another home is another host")
}

func TestConcurrentFirstLoadsAgree(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ids := make([]string, 8)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := Load(home)
			ids[i], errs[i] = id.ID, err
		}()
	}
	wg.Wait()
	for i := range ids {
		require.NoError(t, errs[i])
		require.Equal(t, ids[0], ids[i])
	}
}

func TestSymlinkedOrGarbageIDFileIsRefusedNotReplaced(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.WriteFile(target, []byte(uuid.NewString()), 0o600))
	require.NoError(t, os.Symlink(target, filepath.Join(home, FileName)))
	_, err := Load(home)
	require.ErrorContains(t, err, filepath.Join(home, FileName))

	home2 := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home2, FileName), []byte("not-a-uuid\n"), 0o600))
	_, err = Load(home2)
	require.ErrorContains(t, err, "not a UUID")
	b, _ := os.ReadFile(filepath.Join(home2, FileName))
	require.Equal(t, "not-a-uuid\n", string(b), "never replaced")
}
