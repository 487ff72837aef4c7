package gittools_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
)

func intp(v int) *int { return &v }

func TestDiffBetweenRevisions(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	ts, _ := newToolset(t, repo.dir)
	ctx := context.Background()

	t.Run("base to head shows the patch with renames", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Diff(ctx, gittools.DiffArgs{Base: repo.c2, Head: repo.c3})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, "diff --git a/README.md b/README.md\n")
		require.Contains(t, res.Output, "similarity index 100%\nrename from lib/util.go\nrename to lib/helpers.go\n")
		require.Contains(t, res.Argv, repo.c2)
		require.Contains(t, res.Argv, repo.c3)
	})
	t.Run("branch names reach git as ids", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Diff(ctx, gittools.DiffArgs{Base: "main", Head: "feature"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Argv, repo.m)
		require.Contains(t, res.Argv, repo.f1)
		require.NotContains(t, res.Argv, "feature")
	})
	t.Run("a binary file is named, not dumped", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Diff(ctx, gittools.DiffArgs{Base: repo.c1, Head: repo.c2})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, "Binary files /dev/null and b/img.bin differ\n")
	})
	t.Run("stat shows the diffstat", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Diff(ctx, gittools.DiffArgs{Base: repo.c1, Head: repo.f1, Stat: true})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, "3 files changed")
		require.NotContains(t, res.Output, "diff --git")
	})
	t.Run("paths limit the diff", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Diff(ctx, gittools.DiffArgs{Base: repo.c1, Head: repo.m, Paths: []string{"src", "README.md"}})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, "diff --git a/src/a.go b/src/a.go\n")
		require.Contains(t, res.Output, "diff --git a/README.md b/README.md\n")
		require.NotContains(t, res.Output, "lib/")
		require.Equal(t, []string{"--", ":(literal)src", ":(literal)README.md"}, res.Argv[len(res.Argv)-3:])
	})
	t.Run("context sets the context lines", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Diff(ctx, gittools.DiffArgs{Base: repo.c2, Head: repo.c3, Paths: []string{"README.md"}, Context: intp(0)})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, "@@ -3 +3 @@\n-line two\n+line two changed\n")
		require.NotContains(t, res.Output, " line three")
	})
	t.Run("head without base is refused", func(t *testing.T) {
		t.Parallel()
		_, err := ts.Diff(ctx, gittools.DiffArgs{Head: "main"})
		requireArgError(t, err, "git_diff", "head")
	})
	t.Run("head with staged is refused", func(t *testing.T) {
		t.Parallel()
		_, err := ts.Diff(ctx, gittools.DiffArgs{Base: "main", Head: "main", Staged: true})
		requireArgError(t, err, "git_diff", "head")
	})
	t.Run("context out of range is refused", func(t *testing.T) {
		t.Parallel()
		for _, v := range []int{-1, gittools.MaxContext + 1} {
			_, err := ts.Diff(ctx, gittools.DiffArgs{Context: intp(v)})
			requireArgError(t, err, "git_diff", "context")
		}
	})
	t.Run("too many paths are refused", func(t *testing.T) {
		t.Parallel()
		paths := make([]string, gittools.MaxPaths+1)
		for i := range paths {
			paths[i] = "README.md"
		}
		_, err := ts.Diff(ctx, gittools.DiffArgs{Paths: paths})
		requireArgError(t, err, "git_diff", "paths")
	})
	t.Run("an unknown base is refused", func(t *testing.T) {
		t.Parallel()
		_, err := ts.Diff(ctx, gittools.DiffArgs{Base: "v9"})
		requireArgError(t, err, "git_diff", "base")
		require.ErrorIs(t, err, gittools.ErrUnknownRevision)
	})
}

func TestDiffAgainstTheWorkTreeAndIndex(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	d := repo.dir
	writeFile(t, d, "README.md", "# demo\n\nline two changed\nline three\nstaged line\n")
	gitIn(t, d, nil, "add", "README.md")
	writeFile(t, d, "src/a.go", "package src\n\nfunc A() int { return 3 }\n")
	// A file whose stat data changes but not its content: git diff would
	// refresh the index for it and write the index back.
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(d, "lib/helpers.go"), later, later))
	before := snapshot(t, d)

	ts, _ := newToolset(t, d)
	ctx := context.Background()

	res, err := ts.Diff(ctx, gittools.DiffArgs{})
	require.NoError(t, err)
	requireExited0(t, res)
	require.Contains(t, res.Output, "-func A() int { return 2 }\n+func A() int { return 3 }\n", "index to work tree")
	require.NotContains(t, res.Output, "staged line")
	require.NotContains(t, res.Output, "helpers.go", "a stat-only change is no change")

	res, err = ts.Diff(ctx, gittools.DiffArgs{Staged: true})
	require.NoError(t, err)
	requireExited0(t, res)
	require.Contains(t, res.Output, "+staged line\n", "HEAD to index")
	require.NotContains(t, res.Output, "src/a.go")

	res, err = ts.Diff(ctx, gittools.DiffArgs{Base: repo.c3, Staged: true, Stat: true})
	require.NoError(t, err)
	requireExited0(t, res)
	require.Contains(t, res.Output, " README.md | 1 +\n")
	require.Contains(t, res.Output, " src/a.go  | 2 +-\n", "c3 predates the merge of feature")

	res, err = ts.Diff(ctx, gittools.DiffArgs{Base: "HEAD"})
	require.NoError(t, err)
	requireExited0(t, res)
	require.Contains(t, res.Output, "+staged line\n", "HEAD to work tree")
	require.Contains(t, res.Output, "+func A() int { return 3 }\n")

	require.Equal(t, before, snapshot(t, d), "the work tree and .git (index included) are byte-identical")

	// The control: a plain git diff in the same state does write the index,
	// so the snapshot above would have seen it.
	gitIn(t, d, nil, "diff", "--quiet", "--exit-code", "--", "lib")
	require.NotEqual(t, before, snapshot(t, d))
}
