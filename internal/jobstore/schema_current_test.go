package jobstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// TestSchemaCurrentReadsTheVersionFromTheHeader: a store migrated by this
// build says so in its file's header, which SchemaCurrent reads without
// SQLite; a missing file, one that is not SQLite, one whose header names
// another version and one taken out of WAL mode do not.
func TestSchemaCurrentReadsTheVersionFromTheHeader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "bgcmd.db")
	require.False(t, jobstore.SchemaCurrent(path), "no file yet")
	st, err := jobstore.Open(ctx, jobstore.Options{Path: path})
	require.NoError(t, err)
	require.True(t, jobstore.SchemaCurrent(path), "migrated, while the store is open")
	require.NoError(t, st.Close())
	require.True(t, jobstore.SchemaCurrent(path), "and once it is closed")

	older := filepath.Join(dir, "older.db")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[63]-- // user_version, big-endian, at offset 60
	require.NoError(t, os.WriteFile(older, b, 0o600))
	require.False(t, jobstore.SchemaCurrent(older), "a header naming another version")

	rollback := filepath.Join(dir, "rollback.db")
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	b[18], b[19] = 1, 1 // the file format versions: 2 in WAL mode, 1 with a rollback journal
	require.NoError(t, os.WriteFile(rollback, b, 0o600))
	require.False(t, jobstore.SchemaCurrent(rollback), "a file taken out of WAL mode")

	other := filepath.Join(dir, "other.db")
	require.NoError(t, os.WriteFile(other, make([]byte, 4096), 0o600))
	require.False(t, jobstore.SchemaCurrent(other), "not a SQLite file")

	link := filepath.Join(dir, "link.db")
	require.NoError(t, os.Symlink(path, link))
	require.False(t, jobstore.SchemaCurrent(link), "a symlink is not followed")
}

// TestADeferredStoreConnectsAtItsFirstStatement: Open with Deferred makes
// no connection; the first statement opens the database as it is.
func TestADeferredStoreConnectsAtItsFirstStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	full, err := jobstore.Open(ctx, jobstore.Options{Path: path})
	require.NoError(t, err)
	defer full.Close()
	job := newJob("deferred")
	require.NoError(t, full.Create(ctx, job))

	st, err := jobstore.Open(ctx, jobstore.Options{Path: path, Deferred: true})
	require.NoError(t, err)
	defer st.Close()
	require.False(t, st.Connected(), "opened without a connection")
	rec, err := st.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, job.ID, rec.ID)
	require.True(t, st.Connected(), "connected by its first statement")
}
