package webui_test

import (
	"context"
	"database/sql"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
	"github.com/bgcmd/bgcmd/webui"
)

// Two homes share one PostgreSQL store: a job runs on host A, and host B's
// web view pages, greps and downloads its output, which B fetches from the
// store (A shares its artifacts) and checks against the recorded sha256.
// Output that is not in the store says where it was banked rather than
// "lost".
func TestWebViewOfAnotherHostReadsItsSharedOutput(t *testing.T) {
	t.Parallel()
	dsn := testkit.PostgresDB(t)
	ctx := context.Background()
	root := t.TempDir()
	pol := &policy.Policy{CwdRoot: root, DefaultTimeout: 10 * time.Minute, KillGrace: 2 * time.Second,
		AllowedExecutables: []string{"/usr/bin/printf"}}
	runOn := func(lines ...string) string {
		home := t.TempDir()
		testkit.Cleanup(t, home)
		r, err := runner.New(ctx, runner.Options{Home: home, DB: dsn, Policy: pol})
		require.NoError(t, err)
		defer r.Close(context.Background())
		j, err := r.Start(ctx, append([]string{"/usr/bin/printf", `%s\n`}, lines...), runner.StartOptions{})
		require.NoError(t, err)
		st, err := r.Await(ctx, j.ID, time.Minute)
		require.NoError(t, err)
		require.True(t, st.Settled(), "job %s did not settle within a minute", j.ID)
		return j.ID
	}
	shared := runOn("alpha from host A", "beta from host A")
	private := runOn("kept on host A")
	// A PostgreSQL store shares output by default; take the second job's
	// out of the store, as for a host that did not share it.
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer db.Close()
	for _, q := range []string{
		`DELETE FROM artifact_chunks WHERE sha256 IN (SELECT sha256 FROM artifacts WHERE job_id = $1)`,
		`DELETE FROM artifact_blobs WHERE sha256 IN (SELECT sha256 FROM artifacts WHERE job_id = $1)`,
	} {
		_, err := db.Exec(q, private)
		require.NoError(t, err)
	}

	homeB := t.TempDir()
	ro, err := jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(homeB, "bgcmd.db"), DSN: dsn, ReadOnly: true})
	require.NoError(t, err)
	t.Cleanup(func() { ro.Close() })
	srv, err := webui.New(webui.Options{Store: ro, Home: homeB, Token: testToken})
	require.NoError(t, err)
	b := &fixture{t: t, ts: httptest.NewServer(srv)}
	t.Cleanup(b.ts.Close)

	out := b.page("/jobs/"+shared+"/output", 200)
	require.Contains(t, out, "alpha from host A")
	require.Contains(t, out, "beta from host A")
	grep := b.page("/jobs/"+shared+"/output?grep=beta", 200)
	require.Contains(t, grep, "beta from host A")
	require.Equal(t, "alpha from host A\nbeta from host A\n", b.page("/jobs/"+shared+"/download", 200))

	msg := b.page("/jobs/"+private+"/output", 404)
	require.Contains(t, msg, "not in this home and not in the shared store")
	require.True(t, strings.Contains(msg, "bgcmd output "+private), msg)
}
