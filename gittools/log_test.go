package gittools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
)

// commitLines returns the hashes starting each line of a git_log output.
func commitLines(out string) []string {
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line != "" {
			ids = append(ids, strings.Fields(line)[0])
		}
	}
	return ids
}

func TestLog(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	ts, _ := newToolset(t, repo.dir)
	ctx := context.Background()

	t.Run("the default lists HEAD's history newest first, one line each", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Log(ctx, gittools.LogArgs{})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, []string{repo.m, repo.c3, repo.f1, repo.c2, repo.c1}, commitLines(res.Output))
		require.Contains(t, res.Output, repo.m+" 2024-05-10 Alice Example: merge feature (HEAD -> main)\n")
		require.Contains(t, res.Output, repo.f1+" 2024-03-10 Bob Builder: feature: change a.go (feature)\n")
		require.Contains(t, res.Output, "(tag: v1)")
		require.False(t, res.Truncated)
		require.Equal(t, "git_log", res.Tool)
		require.Equal(t, ts.Git(), res.Argv[0])
		require.Equal(t, map[string]string{"kind": "git", "tool": "git_log", "display": "git log"}, res.Status.Labels)
		require.Equal(t, "git log", res.Display)
		require.Empty(t, res.Reason, "a plain success")
		require.Equal(t, "stdout", string(res.Stream))
		require.Empty(t, res.Hint, "gittools words no hint: each surface does")
		require.NotContains(t, res.Output, "\x1b[", "no colour")
	})
	t.Run("max_count bounds the commits", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Log(ctx, gittools.LogArgs{MaxCount: 2})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, []string{repo.m, repo.c3}, commitLines(res.Output))
		require.Contains(t, res.Argv, "--max-count=2")
	})
	t.Run("ref starts elsewhere and reaches git as the verified id", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Log(ctx, gittools.LogArgs{Ref: "feature"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, []string{repo.f1, repo.c2, repo.c1}, commitLines(res.Output))
		require.Contains(t, res.Argv, repo.f1)
		require.NotContains(t, res.Argv, "feature")
	})
	t.Run("an annotated tag is peeled to its commit", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Log(ctx, gittools.LogArgs{Ref: "v1"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, []string{repo.c1}, commitLines(res.Output))
	})
	t.Run("a file path is followed across its rename", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Log(ctx, gittools.LogArgs{Path: "lib/helpers.go"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, []string{repo.c3, repo.c2}, commitLines(res.Output))
		require.Contains(t, res.Argv, "--follow")
		require.Equal(t, ":(literal)lib/helpers.go", res.Argv[len(res.Argv)-1])
	})
	t.Run("a file deleted from the work tree is still found in history", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Log(ctx, gittools.LogArgs{Path: "lib/util.go"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, []string{repo.c3, repo.c2}, commitLines(res.Output), "renamed away, then added")
	})
	t.Run("a directory path lists the commits below it", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Log(ctx, gittools.LogArgs{Path: "src/"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, []string{repo.f1, repo.c1}, commitLines(res.Output))
		require.NotContains(t, res.Argv, "--follow")
	})
	t.Run("an absolute path inside the repository is made relative", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Log(ctx, gittools.LogArgs{Path: ts.Root() + "/README.md"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, []string{repo.c3, repo.c1}, commitLines(res.Output))
	})
	t.Run("author matches part of the name or email, ignoring case", func(t *testing.T) {
		t.Parallel()
		for _, a := range []string{"bob", "BOB@EXAMPLE", "Builder"} {
			res, err := ts.Log(ctx, gittools.LogArgs{Author: a})
			require.NoError(t, err)
			requireExited0(t, res)
			require.Equal(t, []string{repo.f1}, commitLines(res.Output), "author %q", a)
		}
		res, err := ts.Log(ctx, gittools.LogArgs{Author: "b.b"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Empty(t, commitLines(res.Output), "a fixed string, not a regular expression")
	})
	t.Run("since and until bound the dates, a day inclusive", func(t *testing.T) {
		t.Parallel()
		res, err := ts.Log(ctx, gittools.LogArgs{Since: "2024-02-10", Until: "2024-04-10"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, []string{repo.c3, repo.f1, repo.c2}, commitLines(res.Output))
		require.Contains(t, res.Argv, "--since=2024-02-10 00:00:00 +0000")
		require.Contains(t, res.Argv, "--until=2024-04-10 23:59:59 +0000")

		res, err = ts.Log(ctx, gittools.LogArgs{Since: "2024-03-10T12:00:01Z", Until: "2024-05-10T13:00:00+01:00"})
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, []string{repo.m, repo.c3}, commitLines(res.Output))
	})
	t.Run("an unknown ref is refused and starts no job", func(t *testing.T) {
		t.Parallel()
		_, err := ts.Log(ctx, gittools.LogArgs{Ref: "no-such-branch"})
		ae := requireArgError(t, err, "git_log", "ref")
		require.ErrorIs(t, err, gittools.ErrUnknownRevision)
		require.Equal(t, "no-such-branch", ae.Value)
	})
	t.Run("a ref that names a tree is refused", func(t *testing.T) {
		t.Parallel()
		_, err := ts.Log(ctx, gittools.LogArgs{Ref: repo.c1 + "^{tree}"})
		requireArgError(t, err, "git_log", "ref")
		require.ErrorIs(t, err, gittools.ErrUnknownRevision)
	})
	t.Run("refusals start no job", func(t *testing.T) {
		t.Parallel()
		// A toolset and store of its own, so the siblings' jobs do not count.
		own, ownStore := newToolset(t, repo.dir)
		for _, a := range []gittools.LogArgs{{Ref: "nope"}, {MaxCount: -1}, {Since: "yesterday"}, {Path: "../x"}} {
			_, err := own.Log(ctx, a)
			require.Error(t, err)
		}
		require.Zero(t, jobCount(t, ownStore))
	})
}
