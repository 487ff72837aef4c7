//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/testkit"
)

// TestPostgresSQLCannotWriteFilesOrRunPrograms: a READ ONLY transaction
// refuses changes to tables, but COPY … TO counts as a read there, so a
// role allowed to (a superuser, pg_write_server_files,
// pg_execute_server_program: the role scripts/pg hands out is a
// superuser) had written any file the server can write and run any
// program through `bgcmd sql`, which exited 0. Each is refused now, exit
// 2, saying read-only, and a comment before the statement hides nothing.
func TestPostgresSQLCannotWriteFilesOrRunPrograms(t *testing.T) {
	t.Parallel()
	dsn := testkit.PostgresDB(t)
	h := newHome(t)
	h.env = append(h.env, "BGCMD_DB="+dsn)
	h.ok("list") // migrates the store

	// A folder the server's user can write whoever it runs as (scripts/pg
	// runs it as nobody when the tests run as root).
	outside, err := os.MkdirTemp("", "bgcmd-pg-sql-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(outside) })
	require.NoError(t, os.Chmod(outside, 0o777))
	copied := filepath.Join(outside, "copied.txt")
	ran := filepath.Join(outside, "ran.txt")

	attacks := []sqlAttack{
		{"copy a query's rows into a server file", "COPY (SELECT 'written by a read-only query') TO '" + copied + "'"},
		{"copy to a program the server runs", "COPY (SELECT 1) TO PROGRAM 'id > " + ran + "'"},
		{"copy behind a comment that starts like a query", "/* SELECT */ -- SELECT\nCOPY (SELECT 1) TO '" + copied + "'"},
	}
	holes := sqlRefusalHoles(h, attacks)
	require.NoFileExists(t, copied, "COPY … TO FILE wrote a file on the server's machine")
	require.NoFileExists(t, ran, "COPY … TO PROGRAM ran a program on the server's machine")
	require.Empty(t, holes, "each attack exits 2 saying read-only")
}
