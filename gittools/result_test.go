package gittools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// gatedGit writes a git wrapper whose ls-files waits until the returned gate
// file exists (at most a minute); every other subcommand runs at once.
func gatedGit(t *testing.T) (git, gate string) {
	t.Helper()
	dir := t.TempDir()
	git, gate = filepath.Join(dir, "git"), filepath.Join(dir, "gate")
	script := fmt.Sprintf(`#!/bin/sh
case " $* " in
*" ls-files "*)
	i=0
	while [ ! -e '%s' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done ;;
esac
exec /usr/bin/git "$@"
`, gate)
	require.NoError(t, os.WriteFile(git, []byte(script), 0o755))
	return git, gate
}

func newGatedToolset(t *testing.T, repo string, o gittools.Options) (*gittools.Toolset, string) {
	t.Helper()
	git, gate := gatedGit(t)
	home := t.TempDir()
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: filepath.Join(home, "bgcmd.db")})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	o.Repo, o.Git, o.Runner = repo, git, runner.Options{Store: st, Home: home}
	ts, err := gittools.New(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() {
		os.WriteFile(gate, nil, 0o644) // release anything still waiting
		ts.Close(context.Background())
	})
	return ts, gate
}

func TestACallThatOutlastsMaxWaitReturnsTheRunningJob(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	ts, gate := newGatedToolset(t, repo.dir, gittools.Options{MaxWait: 100 * time.Millisecond})
	ctx := context.Background()

	res, err := ts.LsFiles(ctx, gittools.LsFilesArgs{})
	require.NoError(t, err)
	require.Equal(t, "running", string(res.Status.State))
	require.Empty(t, res.Output)
	require.Equal(t, gittools.ReasonRunning, res.Reason)
	require.Empty(t, res.Stream, "no output yet")

	require.NoError(t, os.WriteFile(gate, nil, 0o644))
	st, err := ts.Runner().Await(ctx, res.JobID, time.Minute)
	require.NoError(t, err)
	require.Equal(t, "exited", string(st.State))
	require.Equal(t, 0, *st.ExitCode)
	require.True(t, strings.HasPrefix(st.TailPreview, "README.md\n"))
}

func TestAGitThatRunsPastTheTimeoutIsStopped(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	ts, _ := newGatedToolset(t, repo.dir, gittools.Options{Timeout: 300 * time.Millisecond, MaxWait: time.Minute})
	res, err := ts.LsFiles(context.Background(), gittools.LsFilesArgs{})
	require.NoError(t, err)
	require.Equal(t, "timeout", string(res.Status.State))
	require.Equal(t, gittools.ReasonNotFinished, res.Reason)
}

func TestLongOutputIsPreviewedFromItsStartAtALineEnd(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	for i := range 60 {
		writeFile(t, repo.dir, fmt.Sprintf("many/file-with-a-long-name-%03d.txt", i), "x\n")
	}
	gitIn(t, repo.dir, nil, "add", "-A")
	commitAt(t, repo.dir, "2024-08-01T00:00:00Z", "alice", "many files")
	ts, _ := newToolset(t, repo.dir)

	res, err := ts.Show(context.Background(), gittools.ShowArgs{Stat: true})
	require.NoError(t, err)
	requireExited0(t, res)
	require.True(t, res.Truncated)
	require.True(t, strings.HasPrefix(res.Output, "commit "))
	require.True(t, strings.HasSuffix(res.Output, "\n"))
	require.LessOrEqual(t, len([]rune(res.Output)), 2000)
	require.Greater(t, res.Status.Stdout.Bytes, int64(len(res.Output)))
	require.Equal(t, "stdout", string(res.Stream))
	require.Empty(t, res.Reason)
}

func TestEachCallIsLabelledWithItsDisplay(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	ts, st := newToolset(t, repo.dir)
	ctx := context.Background()
	three := 3
	for _, c := range []struct {
		call func() (*gittools.Result, error)
		want string
	}{
		{func() (*gittools.Result, error) {
			return ts.Log(ctx, gittools.LogArgs{MaxCount: 50, Author: "Bob Builder"})
		},
			`git log --max-count 50 --author "Bob Builder"`},
		{func() (*gittools.Result, error) { return ts.Show(ctx, gittools.ShowArgs{Rev: "v1", Stat: true}) },
			"git show --rev v1 --stat"},
		{func() (*gittools.Result, error) {
			return ts.Diff(ctx, gittools.DiffArgs{Base: "HEAD~1", Paths: []string{"src", "README.md"}, Context: &three})
		}, "git diff --base HEAD~1 --path src --path README.md --context 3"},
		{func() (*gittools.Result, error) {
			return ts.Blame(ctx, gittools.BlameArgs{Path: "README.md", StartLine: 2, EndLine: 3})
		}, "git blame --path README.md --start-line 2 --end-line 3"},
		{func() (*gittools.Result, error) {
			return ts.MergeBase(ctx, gittools.MergeBaseArgs{A: "main", B: "feature"})
		},
			"git merge-base --a main --b feature"},
		{func() (*gittools.Result, error) { return ts.LsFiles(ctx, gittools.LsFilesArgs{Pattern: "*.go"}) },
			`git ls-files --pattern "*.go"`},
	} {
		res, err := c.call()
		require.NoError(t, err)
		requireExited0(t, res)
		require.Equal(t, c.want, res.Display)
		rec, err := st.Get(ctx, res.JobID)
		require.NoError(t, err)
		require.Equal(t, c.want, rec.Labels["display"])
		require.Equal(t, "git", rec.Labels["kind"])
		require.Equal(t, res.Tool, rec.Labels["tool"])
	}
}
