package gittools_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
)

// field is one value field of one tool: call puts a value into it (with
// whatever else the tool needs to reach it) and calls the tool. A text field
// is free text matched against commits (author), not a name of a file or an
// object, so a bare word that happens to name a symlink is no attack on it.
type field struct {
	tool, name string
	call       func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error)
	text       bool
}

// valueFields lists every string value field of every tool.
var valueFields = []field{
	{"git_log", "ref", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.Log(ctx, gittools.LogArgs{Ref: v})
	}, false},
	{"git_log", "path", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.Log(ctx, gittools.LogArgs{Path: v})
	}, false},
	{"git_log", "since", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.Log(ctx, gittools.LogArgs{Since: v})
	}, false},
	{"git_log", "until", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.Log(ctx, gittools.LogArgs{Until: v})
	}, false},
	{"git_log", "author", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.Log(ctx, gittools.LogArgs{Author: v})
	}, true},
	{"git_show", "rev", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.Show(ctx, gittools.ShowArgs{Rev: v})
	}, false},
	{"git_show", "path", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.Show(ctx, gittools.ShowArgs{Path: v})
	}, false},
	{"git_diff", "base", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.Diff(ctx, gittools.DiffArgs{Base: v})
	}, false},
	{"git_diff", "head", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.Diff(ctx, gittools.DiffArgs{Base: "HEAD", Head: v})
	}, false},
	{"git_diff", "paths[1]", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.Diff(ctx, gittools.DiffArgs{Paths: []string{"README.md", v}})
	}, false},
	{"git_blame", "path", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.Blame(ctx, gittools.BlameArgs{Path: v})
	}, false},
	{"git_blame", "rev", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.Blame(ctx, gittools.BlameArgs{Path: "README.md", Rev: v})
	}, false},
	{"git_merge_base", "a", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.MergeBase(ctx, gittools.MergeBaseArgs{A: v, B: "HEAD"})
	}, false},
	{"git_merge_base", "b", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.MergeBase(ctx, gittools.MergeBaseArgs{A: "HEAD", B: v})
	}, false},
	{"git_ls_files", "path", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.LsFiles(ctx, gittools.LsFilesArgs{Path: v})
	}, false},
	{"git_ls_files", "pattern", func(ctx context.Context, ts *gittools.Toolset, v string) (*gittools.Result, error) {
		return ts.LsFiles(ctx, gittools.LsFilesArgs{Pattern: v})
	}, false},
}

func TestInjectionIsRefusedInEveryField(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "x"), []byte("secret\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(repo.dir, "outlink")))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(repo.dir, "passwd")))
	require.NoError(t, os.Symlink("../../../../../../../../etc", filepath.Join(repo.dir, "src", "up")))
	ts, st := newToolset(t, repo.dir)
	ctx := context.Background()

	attacks := []string{
		"HEAD;rm -rf /",
		"--output=/tmp/x",
		"-c core.pager=sh",
		"-p",
		"../../etc/passwd",
		"src/../../x",
		"/etc/passwd",
		filepath.Join(outside, "x"),
		"outlink/x",
		"outlink/*",
		"src/up/passwd",
		"HEAD\x00",
		"README.md\x00--output=/tmp/x",
		"HEAD\n--output=/tmp/x",
		"$(touch /tmp/pwned)",
		"`id`",
		"a|b",
	}
	t.Run("every field", func(t *testing.T) {
		for _, f := range valueFields {
			t.Run(f.tool+" "+f.name, func(t *testing.T) {
				t.Parallel()
				for _, v := range attacks {
					res, err := f.call(ctx, ts, v)
					require.Nil(t, res, "value %q", v)
					requireArgError(t, err, f.tool, f.name)
				}
				if !f.text {
					// A bare name of a symlink that leads out of the repository.
					res, err := f.call(ctx, ts, "passwd")
					require.Nil(t, res)
					requireArgError(t, err, f.tool, f.name)
				}
			})
		}
	})
	require.Zero(t, jobCount(t, st), "nothing refused started a job")
}

func TestCountsOutOfRangeAreRefused(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	ts, st := newToolset(t, repo.dir)
	ctx := context.Background()
	for _, n := range []int{-1, -1 << 31, gittools.MaxMaxCount + 1, 1 << 40} {
		_, err := ts.Log(ctx, gittools.LogArgs{MaxCount: n})
		requireArgError(t, err, "git_log", "max_count")
		_, err = ts.LsFiles(ctx, gittools.LsFilesArgs{MaxCount: n})
		requireArgError(t, err, "git_ls_files", "max_count")
	}
	for _, n := range []int{-1, -1 << 31, gittools.MaxLine + 1, 1 << 40} {
		_, err := ts.Blame(ctx, gittools.BlameArgs{Path: "README.md", StartLine: n})
		requireArgError(t, err, "git_blame", "start_line")
		_, err = ts.Blame(ctx, gittools.BlameArgs{Path: "README.md", EndLine: n})
		requireArgError(t, err, "git_blame", "end_line")
	}
	for _, n := range []int{-1, -1 << 31, gittools.MaxContext + 1, 1 << 40} {
		_, err := ts.Diff(ctx, gittools.DiffArgs{Context: &n})
		requireArgError(t, err, "git_diff", "context")
	}
	require.Zero(t, jobCount(t, st))
}

func TestArgErrorSaysHowToRecover(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	ts, _ := newToolset(t, repo.dir)
	_, err := ts.Log(context.Background(), gittools.LogArgs{Ref: "--output=/tmp/x"})
	ae := requireArgError(t, err, "git_log", "ref")
	require.Equal(t, "--output=/tmp/x", ae.Value)
	require.Equal(t, `git_log: ref "--output=/tmp/x": begins with '-', which git would read as an option; `+
		"pass a branch, tag or commit id; options are not accepted", err.Error())
}
