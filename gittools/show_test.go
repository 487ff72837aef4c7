package gittools_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
)

func TestShow(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	ts, _ := newToolset(t, repo.dir)
	ctx := context.Background()

	t.Run("a commit is shown with its message and patch", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Show(ctx, gittools.ShowArgs{Rev: repo.c3})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, "commit "+repo.c3+"\n")
		require.Contains(t, res.Output, "Author: Alice Example <alice@example.com>\n")
		require.Contains(t, res.Output, "    rename util.go to helpers.go\n")
		require.Contains(t, res.Output, "rename from lib/util.go\nrename to lib/helpers.go\n")
		require.Contains(t, res.Output, "-line two\n+line two changed\n")
		require.NotContains(t, res.Output, "\x1b[")
	})
	t.Run("the default is HEAD, the merge", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Show(ctx, gittools.ShowArgs{})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, "commit "+repo.m+"\nMerge: ")
		require.Contains(t, res.Output, "    merge feature\n")
	})
	t.Run("stat shows the diffstat instead of the patch", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Show(ctx, gittools.ShowArgs{Rev: repo.c2, Stat: true})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, " img.bin     | Bin 0 -> 21 bytes\n")
		require.Contains(t, res.Output, " lib/util.go |   4 ++++\n")
		require.Contains(t, res.Output, "2 files changed, 4 insertions(+)")
		require.NotContains(t, res.Output, "diff --git")
	})
	t.Run("stat with a path limits the diffstat", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Show(ctx, gittools.ShowArgs{Rev: repo.c2, Stat: true, Path: "lib"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, " lib/util.go | 4 ++++\n")
		require.NotContains(t, res.Output, "img.bin")
	})
	t.Run("a binary file in a patch is named, not dumped", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Show(ctx, gittools.ShowArgs{Rev: repo.c2})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, "Binary files /dev/null and b/img.bin differ\n")
	})
	t.Run("a path shows the file as it was at the revision", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Show(ctx, gittools.ShowArgs{Rev: "v1", Path: "README.md"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, "# demo\n\nline two\nline three\n", res.Output)
		require.Equal(t, []string{"show", gitIn(t, repo.dir, nil, "rev-parse", "v1:README.md")}, res.Argv[len(res.Argv)-2:],
			"the blob's id, not the caller's rev or path, reaches git")
	})
	t.Run("a path deleted since is shown from the old revision", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Show(ctx, gittools.ShowArgs{Rev: repo.c2, Path: "lib/util.go"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, "func Util() string")
	})
	t.Run("a directory path lists the tree", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Show(ctx, gittools.ShowArgs{Path: "lib"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, "\n\nhelpers.go\n")
	})
	t.Run("a binary file's bytes are the job's output", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Show(ctx, gittools.ShowArgs{Path: "img.bin"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.EqualValues(t, 21, res.Status.Stdout.Bytes)
	})
	t.Run("an annotated tag shows the tag and its commit", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Show(ctx, gittools.ShowArgs{Rev: "v1", Stat: true})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, "tag v1\n")
		require.Contains(t, res.Output, "version one\n")
		require.Contains(t, res.Output, "commit "+repo.c1)
	})
	t.Run("a path that does not exist at the revision is refused", func(t *testing.T) {
		t.Parallel()
		_, err := ts.Show(ctx, gittools.ShowArgs{Rev: repo.c1, Path: "lib/util.go"})
		ae := requireArgError(t, err, "git_show", "path")
		require.ErrorIs(t, err, gittools.ErrUnknownRevision)
		require.Contains(t, ae.Reason, "does not exist at revision "+repo.c1)
	})
	t.Run("rev:path in the rev field is refused with a hint", func(t *testing.T) {
		t.Parallel()
		_, err := ts.Show(ctx, gittools.ShowArgs{Rev: "HEAD:README.md"})
		ae := requireArgError(t, err, "git_show", "rev")
		require.Contains(t, ae.Hint, "separate fields")
	})
}
