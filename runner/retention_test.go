package runner_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestRetentionPruneRemovesRowsThenUnreferencedFilesOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	arts := &artifacts.Store{Dir: filepath.Join(e.home, "artifacts")}
	// Two jobs print the same thing (one shared file); one prints its own.
	a := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Session: "old"})
	b := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Session: "new"})
	c := e.start([]string{fixture(t, "exit-with.sh"), "5"}, runner.StartOptions{Session: "old"})
	sa, sb, sc := e.await(a.ID), e.await(b.ID), e.await(c.ID)
	require.Equal(t, sa.Stdout.SHA256, sb.Stdout.SHA256)

	dry, err := e.r.Prune(ctx, jobstore.PruneParams{Session: "old", DryRun: true})
	require.NoError(t, err)
	require.Len(t, dry.Jobs, 2, "await read both jobs, so neither is unread")
	require.Len(t, dry.Unreferenced, 2, "c's two streams; a's files are shared with b")
	require.Equal(t, sc.Stdout.Bytes+sc.Stderr.Bytes, dry.FreedBytes)
	require.Zero(t, dry.RemovedFiles)
	require.True(t, exists(arts.Path(sc.Stdout.SHA256)), "a dry run removes nothing")

	rep, err := e.r.Prune(ctx, jobstore.PruneParams{Session: "old"})
	require.NoError(t, err)
	require.Len(t, rep.Jobs, 2)
	require.Equal(t, 2, rep.RemovedFiles, "two logs; logs shorter than one index stride have no index file")
	require.ElementsMatch(t, dry.Unreferenced, rep.Unreferenced, "what went is what the dry run said would")
	require.Equal(t, dry.FreedBytes, rep.FreedBytes)
	require.False(t, exists(arts.Path(sc.Stdout.SHA256)))
	require.False(t, exists(arts.Path(sc.Stderr.SHA256)+artifacts.IndexSuffix))
	require.True(t, exists(arts.Path(sa.Stdout.SHA256)), "b still references the shared file")
	require.Equal(t, "out: exiting with 0\n", e.output(b.ID, bgcmd.Stdout))
	_, err = e.r.Read(ctx, a.ID)
	require.ErrorIs(t, err, bgcmd.ErrNotFound)

	again, err := e.r.Prune(ctx, jobstore.PruneParams{Session: "old"})
	require.NoError(t, err)
	require.Empty(t, again.Jobs)
	require.NotNil(t, again.Unreferenced, "an empty list, never null")
	require.Zero(t, again.FreedBytes)
}

func TestRetentionGCRemovesStrayFilesAndLeftoverDirsButNotLiveOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	done := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
	kept := e.await(done.ID)
	flag := filepath.Join(t.TempDir(), "go")
	live := e.start([]string{fixture(t, "wait-for-file.sh"), flag, "0"}, runner.StartOptions{})

	// A crash between prune's commit and its file removal, and a supervisor
	// that died after settling but before removing its directory.
	arts := &artifacts.Store{Dir: filepath.Join(e.home, "artifacts")}
	sum := sha256.Sum256([]byte("stray"))
	stray := arts.Path(hex.EncodeToString(sum[:]))
	require.NoError(t, os.MkdirAll(filepath.Dir(stray), 0o755))
	require.NoError(t, os.WriteFile(stray, []byte("stray"), 0o600))
	require.NoError(t, os.WriteFile(stray+artifacts.IndexSuffix, []byte("idx"), 0o600))
	tmp := filepath.Join(filepath.Dir(stray), ".bank-123.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("partial"), 0o600))
	leftSettled := filepath.Join(e.home, "jobs", done.ID)
	leftUnknown := filepath.Join(e.home, "jobs", "0190aaaa-0000-7000-8000-000000000000")
	for _, d := range []string{leftSettled, leftUnknown} {
		require.NoError(t, os.MkdirAll(d, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(d, "stdout.log"), []byte("12345"), 0o600))
	}

	rep, err := e.r.GC(ctx, runner.GCOptions{MinAge: time.Hour})
	require.NoError(t, err)
	require.Empty(t, rep.StrayFiles, "everything is younger than an hour")
	require.Empty(t, rep.JobDirs)
	require.Equal(t, 5, rep.SkippedRecent)

	dry, err := e.r.GC(ctx, runner.GCOptions{DryRun: true})
	require.NoError(t, err)
	require.Len(t, dry.StrayFiles, 3)
	require.True(t, exists(stray), "a dry run removes nothing")

	rep, err = e.r.GC(ctx, runner.GCOptions{})
	require.NoError(t, err)
	require.Len(t, rep.StrayFiles, 3)
	require.Len(t, rep.JobDirs, 2)
	require.Equal(t, int64(len("stray")+len("idx")+len("partial")+10), rep.FreedBytes)
	for _, p := range []string{stray, stray + artifacts.IndexSuffix, tmp, leftSettled, leftUnknown} {
		require.False(t, exists(p), p)
	}
	require.True(t, exists(arts.Path(kept.Stdout.SHA256)), "referenced artifacts stay")
	require.True(t, exists(filepath.Join(e.home, "jobs", live.ID)), "a running job's directory stays")

	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	require.Equal(t, "waiting\ndone\n", func() string { e.await(live.ID); return e.output(live.ID, bgcmd.Stdout) }())
}

func TestRetentionPruneInSmallBatchesRemovesEveryBatchsFilesAndSparesShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	arts := &artifacts.Store{Dir: filepath.Join(e.home, "artifacts")}
	// Seven old jobs, each printing its own lines, pruned two per batch;
	// a new job prints what old job 3 printed, so those files stay.
	var old []*bgcmd.Status
	for code := 1; code <= 7; code++ {
		j := e.start([]string{fixture(t, "exit-with.sh"), strconv.Itoa(code)}, runner.StartOptions{Session: "old"})
		old = append(old, e.await(j.ID))
	}
	keep := e.start([]string{fixture(t, "exit-with.sh"), "3"}, runner.StartOptions{Session: "new"})
	kept := e.await(keep.ID)
	require.Equal(t, old[2].Stdout.SHA256, kept.Stdout.SHA256)

	rep, err := e.r.Prune(ctx, jobstore.PruneParams{Session: "old", BatchSize: 2})
	require.NoError(t, err)
	require.Len(t, rep.Jobs, 7)
	require.Equal(t, 12, rep.RemovedFiles, "two logs of each of six jobs; job 3's are shared")
	for i, s := range old {
		for _, sha := range []string{s.Stdout.SHA256, s.Stderr.SHA256} {
			require.Equal(t, i == 2, exists(arts.Path(sha)), "job %d's log %s", i+1, sha)
		}
	}
	require.Equal(t, "out: exiting with 3\n", e.output(keep.ID, bgcmd.Stdout))
}
