package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// TestGCSweepsTheAgentsExportsOnlyWhenAskedAndNeverAnythingElse: the
// bundles command_export writes under <home>/exports are evidence an
// agent may have cited, so gc keeps them unless told an age
// (ExportsOlderThan), and then removes only those written before it. The
// temporary file of an export a crash interrupted is garbage and goes as
// any other. A file gc did not write there (a bundle of another name, a
// symbolic link, a directory) is never touched.
func TestGCSweepsTheAgentsExportsOnlyWhenAskedAndNeverAnythingElse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	job := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
	e.await(job.ID)
	dir := e.r.ExportsDir()
	export := func() string {
		path := filepath.Join(dir, jobstore.NewID()+".tar.gz")
		_, err := e.r.ExportFile(ctx, []string{job.ID}, path, true)
		require.NoError(t, err)
		return path
	}
	old, fresh := export(), export()
	weekAgo := time.Now().Add(-7 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(old, weekAgo, weekAgo))
	interrupted := filepath.Join(dir, "."+jobstore.NewID()+".tar.gz.tmp123456")
	require.NoError(t, os.WriteFile(interrupted, []byte("partial"), 0o600))
	mine := filepath.Join(dir, "kept-by-hand.tar.gz")
	require.NoError(t, os.WriteFile(mine, []byte("mine"), 0o600))
	outside := filepath.Join(t.TempDir(), jobstore.NewID()+".tar.gz")
	require.NoError(t, os.WriteFile(outside, []byte("outside"), 0o600))
	link := filepath.Join(dir, filepath.Base(outside))
	require.NoError(t, os.Symlink(outside, link))
	sub := filepath.Join(dir, jobstore.NewID()+".tar.gz")
	require.NoError(t, os.Mkdir(sub, 0o700))
	for _, p := range []string{mine, outside, link, sub} {
		require.NoError(t, os.Chtimes(p, weekAgo, weekAgo))
	}
	oldInfo, err := os.Stat(old)
	require.NoError(t, err)

	rep, err := e.r.GC(ctx, runner.GCOptions{})
	require.NoError(t, err)
	require.Equal(t, []runner.GCItem{{Path: interrupted, Bytes: 7, Reason: "the temporary file of an interrupted export"}},
		rep.Exports, "without an age, only the interrupted export goes")
	require.True(t, exists(old) && exists(fresh))

	dry, err := e.r.GC(ctx, runner.GCOptions{ExportsOlderThan: 24 * time.Hour, DryRun: true})
	require.NoError(t, err)
	require.Len(t, dry.Exports, 1)
	require.True(t, exists(old), "a dry run removes nothing")

	rep, err = e.r.GC(ctx, runner.GCOptions{ExportsOlderThan: 24 * time.Hour})
	require.NoError(t, err)
	require.Equal(t, []runner.GCItem{{Path: old, Bytes: oldInfo.Size(), Reason: "a bundle command_export wrote more than 24h0m0s ago"}},
		rep.Exports)
	require.Equal(t, oldInfo.Size(), rep.FreedBytes)
	require.False(t, exists(old))
	for _, p := range []string{fresh, mine, outside, link, sub} {
		require.True(t, exists(p), "%s is kept", p)
	}
}
