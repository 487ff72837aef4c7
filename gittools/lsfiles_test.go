package gittools_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
)

// allFiles is the index of TestLsFiles's repository, as git lists it.
const allFiles = "README.md\nimg.bin\nlib/helpers.go\nodd[1]/x.go\nsrc/a.go\nsrc/deep/b.go\n"

func TestLsFiles(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	writeFile(t, repo.dir, "src/deep/b.go", "package deep\n")
	writeFile(t, repo.dir, "odd[1]/x.go", "package odd\n")
	gitIn(t, repo.dir, nil, "add", "-A")
	commitAt(t, repo.dir, "2024-07-01T00:00:00Z", "alice", "more files")
	ts, _ := newToolset(t, repo.dir)
	ctx := context.Background()
	list := func(t *testing.T, a gittools.LsFilesArgs) *gittools.Result {
		t.Helper()
		res, err := ts.LsFiles(ctx, a)
		require.NoError(t, err)
		requireExited0(t, res)
		return res
	}

	t.Run("everything in the index", func(t *testing.T) {
		t.Parallel()
		res := list(t, gittools.LsFilesArgs{})
		require.Equal(t, allFiles, res.Output)
		require.False(t, res.Truncated)
	})
	t.Run("a path prefix", func(t *testing.T) {
		t.Parallel()
		res := list(t, gittools.LsFilesArgs{Path: "src"})
		require.Equal(t, "src/a.go\nsrc/deep/b.go\n", res.Output)
	})
	t.Run("a glob: * stays in one level, ** crosses levels", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, "src/a.go\n", list(t, gittools.LsFilesArgs{Pattern: "src/*.go"}).Output)
		require.Equal(t, "lib/helpers.go\nodd[1]/x.go\nsrc/a.go\nsrc/deep/b.go\n", list(t, gittools.LsFilesArgs{Pattern: "**/*.go"}).Output)
		require.Equal(t, "", list(t, gittools.LsFilesArgs{Pattern: "*.go"}).Output)
	})
	t.Run("a glob below a path, whose glob characters are literal", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, "src/deep/b.go\n", list(t, gittools.LsFilesArgs{Path: "src", Pattern: "deep/*"}).Output)
		require.Equal(t, "odd[1]/x.go\n", list(t, gittools.LsFilesArgs{Path: "odd[1]", Pattern: "*.go"}).Output)
		require.Equal(t, "odd[1]/x.go\n", list(t, gittools.LsFilesArgs{Path: "odd[1]"}).Output)
	})
	t.Run("max_count bounds the output, the job keeps everything", func(t *testing.T) {
		t.Parallel()
		res := list(t, gittools.LsFilesArgs{MaxCount: 2})
		require.Equal(t, "README.md\nimg.bin\n", res.Output)
		require.True(t, res.Truncated)
		require.EqualValues(t, len(allFiles), res.Status.Stdout.Bytes)
		require.Equal(t, "stdout", string(res.Stream))
		require.Equal(t, "git ls-files --max-count 2", res.Display)
	})
	t.Run("max_count out of range is refused", func(t *testing.T) {
		t.Parallel()
		for _, n := range []int{-1, gittools.MaxMaxCount + 1} {
			_, err := ts.LsFiles(ctx, gittools.LsFilesArgs{MaxCount: n})
			requireArgError(t, err, "git_ls_files", "max_count")
		}
	})
	t.Run("a pattern with its own pathspec magic is refused", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{":(top)*", ":!secret", ":(icase)*.GO", "[unclosed"} {
			_, err := ts.LsFiles(ctx, gittools.LsFilesArgs{Pattern: p})
			requireArgError(t, err, "git_ls_files", "pattern")
		}
	})
}
