package jobstore

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

func TestDiskFullIsKnownByItsSQLiteCodeNotItsText(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "small.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = db.Exec(`CREATE TABLE t (b BLOB)`)
	require.NoError(t, err)
	// A database that may not grow past a few pages fails as a full disk
	// does: SQLITE_FULL.
	_, err = db.Exec(`PRAGMA max_page_count = 4`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO t VALUES (?)`, []byte(strings.Repeat("x", 64<<10)))
	require.Error(t, err)
	require.True(t, diskFull(err), "SQLite's own full error: %v", err)
	require.Contains(t, describeWriteError(err).Error(), diskFullHint)
	require.Contains(t, describeOpenError("/db", err).Error(), diskFullHint)

	lookalike := errors.New("a message that mentions disk is full and SQLITE_FULL")
	require.False(t, diskFull(lookalike), "text alone is no SQLite error")
	require.Equal(t, lookalike, describeWriteError(lookalike))
}

// PostgreSQL says "the disk is full" as SQLSTATE 53100: the same hint.
func TestDiskFullIsKnownByItsPostgresCode(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("commit: %w", &pgconn.PgError{Code: "53100", Message: "could not extend file"})
	require.True(t, diskFull(err))
	require.Contains(t, describeWriteError(err).Error(), diskFullHint)
	require.False(t, diskFull(&pgconn.PgError{Code: "23505"}))
}
