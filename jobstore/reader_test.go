package jobstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/jobstore"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// TestReaderCannotWrite: the host's way into the store reads and nothing
// else; a write smuggled through Query leaves the row as it was.
func TestReaderCannotWrite(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	r, err := runner.New(ctx, runner.Options{Home: home,
		Policy: &policy.Policy{AllowedExecutables: []string{"/usr/bin/true"}, CwdRoot: home}})
	require.NoError(t, err)
	job, err := r.Start(ctx, []string{"/usr/bin/true"}, runner.StartOptions{})
	require.NoError(t, err)
	st, err := r.Await(ctx, job.ID, 2*time.Minute)
	require.NoError(t, err)
	require.True(t, st.Settled())
	require.NoError(t, r.Close(ctx))

	rd, err := jobstore.Open(ctx, home)
	require.NoError(t, err)
	defer rd.Close()
	for _, q := range []string{
		`UPDATE jobs SET state = 'killed'`,
		`DELETE FROM jobs`,
		`INSERT INTO refusals (id) VALUES ('x')`,
	} {
		err := rd.Query(ctx, q, func([]string) error { return nil }, func(jobstore.QueryRow) error { return nil })
		require.Error(t, err, q)
	}
	got, err := rd.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, "exited", string(got.State))
	full, err := rd.ResolveID(ctx, job.ID[:8])
	require.NoError(t, err)
	require.Equal(t, job.ID, full)
}

// TestReaderNeedsAnExistingHome: opening a home that has no database says
// so instead of creating one.
func TestReaderNeedsAnExistingHome(t *testing.T) {
	_, err := jobstore.Open(context.Background(), t.TempDir())
	require.Error(t, err)
	require.Contains(t, err.Error(), "bgcmd.db")
}
