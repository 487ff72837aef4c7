package gittools_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
)

func TestMergeBase(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	ts, _ := newToolset(t, repo.dir)
	ctx := context.Background()

	t.Run("two branches meet at their fork point", func(t *testing.T) {
		t.Parallel()
		res, err := ts.MergeBase(ctx, gittools.MergeBaseArgs{A: repo.c3, B: "feature"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, repo.c2+"\n", res.Output)
		require.Equal(t, []string{"merge-base", repo.c3, repo.f1}, res.Argv[len(res.Argv)-3:])
	})
	t.Run("after the merge the base is the merged commit", func(t *testing.T) {
		t.Parallel()
		res, err := ts.MergeBase(ctx, gittools.MergeBaseArgs{A: "main", B: "feature"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, repo.f1+"\n", res.Output)
	})
	t.Run("unrelated histories have none, and the reason says so", func(t *testing.T) {
		t.Parallel()
		res, err := ts.MergeBase(ctx, gittools.MergeBaseArgs{A: "main", B: "orphan"})
		require.NoError(t, err)
		require.Equal(t, 1, *res.Status.ExitCode)
		require.Empty(t, res.Output)
		require.Equal(t, gittools.ReasonNoCommonAncestor, res.Reason)
	})
	t.Run("both revisions are required and verified", func(t *testing.T) {
		t.Parallel()
		_, err := ts.MergeBase(ctx, gittools.MergeBaseArgs{B: "main"})
		requireArgError(t, err, "git_merge_base", "a")
		_, err = ts.MergeBase(ctx, gittools.MergeBaseArgs{A: "main"})
		requireArgError(t, err, "git_merge_base", "b")
		_, err = ts.MergeBase(ctx, gittools.MergeBaseArgs{A: "main", B: "gone"})
		requireArgError(t, err, "git_merge_base", "b")
		require.ErrorIs(t, err, gittools.ErrUnknownRevision)
	})
}
