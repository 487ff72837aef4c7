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
	"github.com/bgcmd/bgcmd/jobstore"
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
	ts, err := gittools.New(o)
	require.NoError(t, err)
	t.Cleanup(func() {
		os.WriteFile(gate, nil, 0o644) // release anything still waiting
		ts.Close()
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
	require.Contains(t, res.Hint, "command_wait {task_id: "+res.JobID+"}")

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
	require.Contains(t, res.Hint, "did not finish normally (timeout")
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
	require.Contains(t, res.Hint, "command_output {task_id: "+res.JobID+", stream: stdout}")
}
