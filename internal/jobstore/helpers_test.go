package jobstore_test

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"
)

// openRaw opens the database file directly, to check what the store wrote
// without going through it.
func openRaw(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}
