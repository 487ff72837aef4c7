//go:build linux

package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/jobstore"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// TestRunnerOnPostgresByOptionsDB: runner.New with Options.DB opens the
// PostgreSQL store itself; a job it runs is recorded there, and a host
// reading the same database (jobstore.OpenDB) sees it settled.
func TestRunnerOnPostgresByOptionsDB(t *testing.T) {
	t.Parallel()
	dsn := testkit.PostgresDB(t)
	ctx := context.Background()
	home, root := t.TempDir(), t.TempDir()
	exe := fixture(t, "exit-with.sh")
	r, err := runner.New(ctx, runner.Options{Home: home, DB: dsn,
		Policy: &policy.Policy{CwdRoot: root, AllowedExecutables: []string{exe}, KillGrace: time.Second}})
	require.NoError(t, err)
	j, err := r.Start(ctx, []string{exe, "4"}, runner.StartOptions{})
	require.NoError(t, err)
	st, err := r.Await(ctx, j.ID, time.Minute)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, st.State)
	require.NoError(t, r.Close(ctx))

	rd, err := jobstore.OpenDB(ctx, home, dsn)
	require.NoError(t, err)
	defer rd.Close()
	rec, err := rd.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, rec.State)
	require.NotNil(t, rec.ExitCode)
	require.Equal(t, 4, *rec.ExitCode)
	require.NoFileExists(t, home+"/bgcmd.db", "the SQLite file was never made")
}
