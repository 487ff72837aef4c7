package jobstore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/migrations"
)

// Stored JSON is not HTML-escaped, so SQL over it finds shell-looking text
// as written; rows written before that are rewritten by a migration.
func TestStoredJSONIsNotHTMLEscaped(t *testing.T) {
	t.Parallel()
	eachBackend(t, testStoredJSONIsNotHTMLEscaped)
}

func testStoredJSONIsNotHTMLEscaped(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	s := openTest(t, jobstore.Options{Path: path})
	j := newJob("s", "/usr/bin/env", "sh-like", "2>&1", "a<b")
	j.Labels = map[string]string{"why": "x&y"}
	require.NoError(t, s.Create(ctx, j))
	var n int
	require.NoError(t, rawDB(t, s).QueryRow(`SELECT count(*) FROM jobs
		WHERE argv LIKE '%2>&1%' AND argv LIKE '%a<b%' AND labels LIKE '%x&y%'`).Scan(&n))
	require.Equal(t, 1, n)
	got, err := s.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, j.Argv, got.Argv)
	require.Equal(t, "x&y", got.Labels["why"])
}

// SQLite only: it rewrites rows SQLite stores from before migration 7; a
// PostgreSQL store never held them.
func TestMigrationRewritesHTMLEscapedJSON(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.FS, goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 6) // the schema before stored JSON was unescaped
	require.NoError(t, err)
	const id = "01a20000-0000-7000-8000-000000000001"
	_, err = db.Exec(`INSERT INTO jobs (id, session, host, argv, exe, cwd, env_replaced, env_names, timeout_ms,
		kill_grace_ms, max_output_bytes, labels, state, created_at)
		VALUES (?, 's', 'h', ?, '/usr/bin/env', '/', 0, '[]', 1000, 1000, 10, ?, 'running', '2026-11-30T00:00:00Z')`,
		id, `["/usr/bin/env","2\u003e\u00261","a\\u003cb","q\"uote"]`, `{"why":"x\u0026y"}`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO job_events (job_id, from_state, to_state, at, detail) VALUES (?, NULL, 'running', '2026-11-30T00:00:00Z', ?)`,
		id, `{"note":"\u003cb\u003e","n":3,"nested":{"k":"v"}}`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s := openTest(t, jobstore.Options{Path: path})
	var argv, labels, detail string
	require.NoError(t, openRaw(t, path).QueryRow(`SELECT argv, labels,
		(SELECT detail FROM job_events WHERE job_id = jobs.id) FROM jobs`).Scan(&argv, &labels, &detail))
	require.Equal(t, `["/usr/bin/env","2>&1","a\\u003cb","q\"uote"]`, argv, "a literal backslash-u stays as it was")
	require.Equal(t, `{"why":"x&y"}`, labels)
	require.Equal(t, `{"note":"<b>","n":3,"nested":{"k":"v"}}`, detail)
	got, err := s.Get(ctx, id)
	require.NoError(t, err)
	require.Equal(t, []string{"/usr/bin/env", "2>&1", `a\u003cb`, `q"uote`}, got.Argv)
}
