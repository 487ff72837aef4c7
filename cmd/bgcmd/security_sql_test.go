package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSQLCannotWriteAnyFile is the exploit of `bgcmd sql` as a way to
// write: mode=ro covers only the main database, so ATTACH of the store's
// own file, ATTACH of a new path, VACUUM INTO and the pragmas that would
// lift the restrictions must each be refused (exit 2, "read-only") and
// leave every file as it was.
func TestSQLCannotWriteAnyFile(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "exit-with.sh"), "3")
	require.Equal(t, 3, h.bgcmd("wait", id).code)
	require.Equal(t, "3", strings.TrimSpace(lastLine(h.ok("sql", "--csv", "SELECT exit_code FROM jobs WHERE id = '"+id+"'"))))

	db := filepath.Join(h.dir, "bgcmd.db")
	outside := t.TempDir()
	created := filepath.Join(outside, "created.db")
	copied := filepath.Join(outside, "copy.db")
	attacks := []sqlAttack{
		{"attach the store and rewrite history", "ATTACH DATABASE '" + db + "' AS w; UPDATE w.jobs SET exit_code = 0"},
		{"attach the store alone", "ATTACH DATABASE '" + db + "' AS w"},
		{"attach a new file", "ATTACH DATABASE '" + created + "' AS n; CREATE TABLE n.t (x)"},
		{"attach a uri", "ATTACH DATABASE 'file:" + created + "?mode=rwc' AS n"},
		{"vacuum into a copy", "VACUUM INTO '" + copied + "'"},
		{"update the main database", "UPDATE jobs SET exit_code = 0"},
		{"lift query_only", "PRAGMA query_only = 0; UPDATE jobs SET exit_code = 0"},
		{"temp table", "CREATE TEMP TABLE t AS SELECT * FROM jobs"},
		{"writable schema", "PRAGMA writable_schema = 1"},
		{"journal mode", "PRAGMA journal_mode = DELETE"},
		{"checkpoint", "PRAGMA wal_checkpoint(TRUNCATE)"},
		{"select then write", "SELECT 1; DELETE FROM jobs"},
	}
	holes := sqlRefusalHoles(h, attacks)
	require.Empty(t, holes, "each attack exits 2 saying read-only")
	require.NoFileExists(t, created, "ATTACH created a file")
	require.NoFileExists(t, copied, "VACUUM INTO wrote a copy")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, entries, "no file appears outside the home")
	require.Equal(t, "3", strings.TrimSpace(lastLine(h.ok("sql", "--csv", "SELECT exit_code FROM jobs WHERE id = '"+id+"'"))),
		"history is unchanged")

	// Reading still works, pragmas that only read included.
	require.Contains(t, h.ok("sql", "PRAGMA table_info(jobs)"), "exit_code")
	require.Contains(t, h.ok("sql", "SELECT name FROM pragma_table_info('jobs')"), "exit_code")
	require.Contains(t, h.ok("sql", "--csv", "PRAGMA query_only"), "1")
}

// TestSQLQueryStopsAtItsTimeLimit: a query that would run for ever is
// interrupted at --timeout and says so.
func TestSQLQueryStopsAtItsTimeLimit(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.ok("list") // creates the store
	r := h.bgcmd("sql", "--timeout", "300ms",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n")
	require.Equal(t, exitRuntime, r.code, "stdout %q stderr %q", r.stdout, r.stderr)
	require.Contains(t, r.stderr, "time limit")
	require.Contains(t, r.stderr, "--timeout")

	r = h.bgcmd("sql", "--timeout", "soon", "SELECT 1")
	require.Equal(t, exitUsage, r.code)
}

// TestSQLTableOutputIsCapped: a huge result in the aligned table keeps a
// bounded number of rows and says how many were cut; CSV streams them all.
func TestSQLTableOutputIsCapped(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.ok("list")
	q := "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) SELECT i FROM n"
	r := h.bgcmd("sql", q)
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Equal(t, 1+maxTableRows, len(lines), "header plus the capped rows")
	require.Contains(t, r.stderr, strconv.Itoa(5000-maxTableRows)+" more row")
	csvOut := h.ok("sql", "--csv", q)
	require.Equal(t, 5001, len(strings.Split(strings.TrimSpace(csvOut), "\n")), "CSV streams every row")
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// sqlAttack is a query `bgcmd sql` must refuse as read-only, and what it
// tries.
type sqlAttack struct{ name, query string }

// sqlRefusalHoles runs each of attacks through `bgcmd sql` in h and
// describes every one that was not refused as read-only (exit 2).
func sqlRefusalHoles(h *home, attacks []sqlAttack) []string {
	var holes []string
	for _, a := range attacks {
		r := h.bgcmd("sql", a.query)
		if r.code != exitUsage || !strings.Contains(r.stderr, "read-only") {
			holes = append(holes, fmt.Sprintf("%s: %q: exit %d, stdout %q, stderr %q", a.name, a.query, r.code, r.stdout, r.stderr))
		}
	}
	return holes
}
