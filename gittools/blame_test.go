package gittools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
)

func TestBlame(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	ts, _ := newToolset(t, repo.dir)
	ctx := context.Background()

	t.Run("each line names the commit and author that last changed it", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Blame(ctx, gittools.BlameArgs{Path: "README.md"})
		require.NoError(t, err)
		requireExited0(t, res)
		lines := strings.Split(strings.TrimSuffix(res.Output, "\n"), "\n")
		require.Len(t, lines, 4)
		require.True(t, strings.HasPrefix(lines[2], repo.c3[:8]), lines[2])
		require.Contains(t, lines[2], "Alice Example 2024-04-10")
		require.True(t, strings.HasSuffix(lines[2], " 3) line two changed"), lines[2])
		require.True(t, strings.HasPrefix(lines[3], "^"+repo.c1[:7]), "a boundary line: %s", lines[3])
		require.Equal(t, []string{"--no-textconv", repo.m, "--", "README.md"}, res.Argv[len(res.Argv)-4:])
	})
	t.Run("a merged line is blamed on its author", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Blame(ctx, gittools.BlameArgs{Path: "src/a.go", StartLine: 3, EndLine: 3})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, repo.f1[:8]+" (Bob Builder 2024-03-10 12:00:00 +0000 3) func A() int { return 2 }\n")
		require.Equal(t, 1, strings.Count(res.Output, "\n"))
	})
	t.Run("a line range from a start runs to the end", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Blame(ctx, gittools.BlameArgs{Path: "README.md", StartLine: 3})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, 2, strings.Count(res.Output, "\n"))
		require.Contains(t, res.Argv, "3,")
	})
	t.Run("an older revision blames the file as it was", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Blame(ctx, gittools.BlameArgs{Path: "lib/util.go", Rev: repo.c2, EndLine: 1})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Contains(t, res.Output, "1) package lib\n")
		require.Contains(t, res.Argv, "1,1")
	})
	t.Run("a line past the end is git's error, not a success", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Blame(ctx, gittools.BlameArgs{Path: "README.md", StartLine: 50})
		require.NoError(t, err)
		require.Equal(t, "exited", string(res.Status.State))
		require.NotEqual(t, 0, *res.Status.ExitCode)
		require.Contains(t, res.Output, "has only 4 lines")
		require.Equal(t, gittools.ReasonExitStatus, res.Reason)
		require.Equal(t, "stderr", string(res.Stream), "Output is git's message")
	})
	t.Run("path is required and must be a file at the revision", func(t *testing.T) {
		t.Parallel()
		_, err := ts.Blame(ctx, gittools.BlameArgs{})
		requireArgError(t, err, "git_blame", "path")
		_, err = ts.Blame(ctx, gittools.BlameArgs{Path: "."})
		requireArgError(t, err, "git_blame", "path")
		_, err = ts.Blame(ctx, gittools.BlameArgs{Path: "src"})
		requireArgError(t, err, "git_blame", "path")
		_, err = ts.Blame(ctx, gittools.BlameArgs{Path: "lib/util.go"})
		requireArgError(t, err, "git_blame", "path")
		require.ErrorIs(t, err, gittools.ErrUnknownRevision)
	})
	t.Run("line ranges out of order or range are refused", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			a     gittools.BlameArgs
			field string
		}{
			{gittools.BlameArgs{Path: "README.md", StartLine: -1}, "start_line"},
			{gittools.BlameArgs{Path: "README.md", EndLine: -5}, "end_line"},
			{gittools.BlameArgs{Path: "README.md", StartLine: 3, EndLine: 2}, "end_line"},
			{gittools.BlameArgs{Path: "README.md", StartLine: gittools.MaxLine + 1}, "start_line"},
		} {
			_, err := ts.Blame(ctx, c.a)
			requireArgError(t, err, "git_blame", c.field)
		}
	})
}
