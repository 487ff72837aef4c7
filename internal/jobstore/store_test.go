package jobstore_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

func openTest(t testing.TB, opts jobstore.Options) *jobstore.Store {
	t.Helper()
	if opts.Path == "" {
		opts.Path = filepath.Join(t.TempDir(), "bgcmd.db")
	}
	if opts.Host == "" {
		opts.Host = "test-host"
	}
	opts = backendOptions(t, opts)
	s, err := jobstore.Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func newJob(session string, argv ...string) *bgcmd.Job {
	if len(argv) == 0 {
		argv = []string{"/bin/true"}
	}
	return &bgcmd.Job{Session: session, Argv: argv, Exe: argv[0], Cwd: "/",
		Timeout: time.Minute, KillGrace: time.Second, MaxOutputBytes: 1 << 20}
}

// The Open tests below are about the SQLite file (its path, WAL, what is
// not a database); TestOpenOnPostgres is their PostgreSQL half.

func TestOpenMigratesAnEmptyFileAndReopenIsANoOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "dir", "bgcmd.db")
	s := openTest(t, jobstore.Options{Path: path})
	require.NoError(t, s.Create(ctx, newJob("a")))
	require.NoError(t, s.Close())

	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var versions int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM goose_db_version`).Scan(&versions))

	s2 := openTest(t, jobstore.Options{Path: path})
	res, err := s2.List(ctx, jobstore.ListParams{})
	require.NoError(t, err)
	require.Len(t, res.Jobs, 1, "the job written before the reopen is still there")
	var after int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM goose_db_version`).Scan(&after))
	require.Equal(t, versions, after, "reopening applies no migration")

	var mode string
	require.NoError(t, db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	require.Equal(t, "wal", mode)
}

func TestOpenRefusesAFileThatIsNotADatabaseAndLeavesItAlone(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	content := []byte("these are somebody's notes, not a database\n")
	require.NoError(t, os.WriteFile(path, content, 0o600))
	_, err := jobstore.Open(context.Background(), jobstore.Options{Path: path})
	require.Error(t, err)
	require.Contains(t, err.Error(), path)
	require.Contains(t, err.Error(), "not a SQLite database")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, content, got)
}

func TestOpenRefusesADatabaseFromANewerVersion(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	s := openTest(t, jobstore.Options{Path: path})
	require.NoError(t, s.Close())
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, 1)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	_, err = jobstore.Open(context.Background(), jobstore.Options{Path: path})
	require.Error(t, err)
	require.Contains(t, err.Error(), "newer than this bgcmd knows")
	require.Contains(t, err.Error(), path)
}

func TestOpenFailsClearlyWhenTheDirectoryCannotBeCreated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	path := filepath.Join(blocker, "home", "bgcmd.db")
	_, err := jobstore.Open(context.Background(), jobstore.Options{Path: path})
	require.Error(t, err)
	require.Contains(t, err.Error(), path)
}

func TestReadOnlyStoreRefusesWrites(t *testing.T) {
	t.Parallel()
	eachBackend(t, testReadOnlyStoreRefusesWrites)
}

func testReadOnlyStoreRefusesWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	s := openTest(t, jobstore.Options{Path: path})
	require.NoError(t, s.Create(ctx, newJob("a")))
	ro := openTest(t, jobstore.Options{Path: path, ReadOnly: true})
	res, err := ro.List(ctx, jobstore.ListParams{})
	require.NoError(t, err)
	require.Len(t, res.Jobs, 1)
	require.ErrorIs(t, ro.Create(ctx, newJob("a")), jobstore.ErrReadOnly)
}
