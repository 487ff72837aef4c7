package gittools_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// newRunnerTemplate returns runner options over a fresh store.
func newRunnerTemplate(t *testing.T) runner.Options {
	t.Helper()
	home := t.TempDir()
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: filepath.Join(home, "bgcmd.db")})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return runner.Options{Store: st, Home: home}
}

func TestNew(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)

	t.Run("a directory that is not a repository is refused", func(t *testing.T) {
		t.Parallel()
		_, err := gittools.New(context.Background(), gittools.Options{Repo: t.TempDir(), Runner: newRunnerTemplate(t)})
		require.ErrorIs(t, err, gittools.ErrNotRepository)
	})
	t.Run("a missing repository is refused", func(t *testing.T) {
		t.Parallel()
		_, err := gittools.New(context.Background(), gittools.Options{Repo: filepath.Join(t.TempDir(), "nope"), Runner: newRunnerTemplate(t)})
		require.Error(t, err)
	})
	t.Run("no repository is refused", func(t *testing.T) {
		t.Parallel()
		_, err := gittools.New(context.Background(), gittools.Options{Runner: newRunnerTemplate(t)})
		require.ErrorIs(t, err, gittools.ErrNotRepository)
	})
	t.Run("a bare repository is refused", func(t *testing.T) {
		t.Parallel()
		bare := t.TempDir()
		gitIn(t, bare, nil, "init", "-q", "--bare")
		_, err := gittools.New(context.Background(), gittools.Options{Repo: bare, Runner: newRunnerTemplate(t)})
		require.ErrorIs(t, err, gittools.ErrNotRepository)
	})
	t.Run("the .git directory is refused", func(t *testing.T) {
		t.Parallel()
		_, err := gittools.New(context.Background(), gittools.Options{Repo: filepath.Join(repo.dir, ".git"), Runner: newRunnerTemplate(t)})
		require.ErrorIs(t, err, gittools.ErrNotRepository)
	})
	t.Run("a work tree moved by core.worktree is refused", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		gitIn(t, dir, nil, "init", "-q")
		gitIn(t, dir, nil, "config", "core.worktree", "/")
		_, err := gittools.New(context.Background(), gittools.Options{Repo: dir, Runner: newRunnerTemplate(t)})
		require.ErrorIs(t, err, gittools.ErrNotRepository)
	})
	t.Run("a subdirectory or a symlink serves the real top level", func(t *testing.T) {
		t.Parallel()
		real, err := filepath.EvalSymlinks(repo.dir)
		require.NoError(t, err)
		link := filepath.Join(t.TempDir(), "link")
		require.NoError(t, os.Symlink(repo.dir, link))
		for _, p := range []string{filepath.Join(repo.dir, "src"), link} {
			ts, err := gittools.New(context.Background(), gittools.Options{Repo: p, Runner: newRunnerTemplate(t)})
			require.NoError(t, err)
			require.Equal(t, real, ts.Root())
			require.NoError(t, ts.Close(context.Background()))
		}
	})
	t.Run("a git that does not exist is refused", func(t *testing.T) {
		t.Parallel()
		_, err := gittools.New(context.Background(), gittools.Options{Repo: repo.dir, Git: "/nonexistent/git", Runner: newRunnerTemplate(t)})
		require.Error(t, err)
	})
	t.Run("a runner template without a store is refused", func(t *testing.T) {
		t.Parallel()
		_, err := gittools.New(context.Background(), gittools.Options{Repo: repo.dir})
		require.Error(t, err)
	})
}

func TestPrivatePolicyAllowsGitAlone(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	ts, st := newToolset(t, repo.dir)
	require.True(t, filepath.IsAbs(ts.Git()))

	pol := ts.Runner().Policy()
	require.Equal(t, []string{ts.Git()}, pol.AllowedExecutables)
	require.Equal(t, ts.Root(), pol.CwdRoot)

	ctx := context.Background()
	_, err := ts.Runner().Start(ctx, []string{"/bin/sh", "-c", "true"}, runner.StartOptions{})
	r, ok := policy.IsRefusal(err)
	require.True(t, ok, "want a refusal, got %v", err)
	require.Equal(t, policy.CodeNotAllowlisted, r.Code)

	_, err = ts.Runner().Start(ctx, []string{ts.Git(), "status"}, runner.StartOptions{Cwd: t.TempDir()})
	r, ok = policy.IsRefusal(err)
	require.True(t, ok, "want a refusal, got %v", err)
	require.Equal(t, policy.CodeCwdEscape, r.Code)
	require.Zero(t, jobCount(t, st))
}

func TestToolsetsOverOneStoreKeepTheirPolicies(t *testing.T) {
	t.Parallel()
	a, b := newHistoryRepo(t), newHistoryRepo(t)
	tmpl := newRunnerTemplate(t)
	tsA, err := gittools.New(context.Background(), gittools.Options{Repo: a.dir, Runner: tmpl})
	require.NoError(t, err)
	defer tsA.Close(context.Background())
	tsB, err := gittools.New(context.Background(), gittools.Options{Repo: b.dir, Runner: tmpl})
	require.NoError(t, err)
	defer tsB.Close(context.Background())
	require.NotEqual(t, tsA.Root(), tsB.Root())
	require.Nil(t, tmpl.Policy, "the template is copied, not changed")

	res, err := tsB.LsFiles(context.Background(), gittools.LsFilesArgs{})
	require.NoError(t, err)
	requireExited0(t, res)
	require.Equal(t, tsB.Root(), res.Status.Cwd)
}
