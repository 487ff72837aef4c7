package gittools_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/gittools"
)

// The tools that read history (show, log, blame, merge-base, a diff of two
// revisions) read nothing of the work tree. Git looks up each diffed
// path's .gitattributes in the work tree and opens it with O_NOFOLLOW,
// which guards only the last element: a directory of the work tree that is
// a symlink to a directory outside (one a clone checks out, with no write
// of the agent's) made git read that directory's .gitattributes, whose
// attributes changed the output and whose bad lines git echoed on stderr.
func TestHistoryToolsReadNoAttributesThroughASymlinkedDirectory(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, ".gitattributes"),
		[]byte("*.txt binary\n* leaked!secret=hunter2\n"), 0o600))
	src := t.TempDir()
	gitIn(t, src, nil, "init", "-q", "-b", "main")
	writeFile(t, src, "sub/f.txt", "one\n")
	gitIn(t, src, nil, "add", "-A")
	commitAt(t, src, "2024-01-01T00:00:00Z", "alice", "one")
	writeFile(t, src, "sub/f.txt", "two\n")
	gitIn(t, src, nil, "add", "-A")
	c2 := commitAt(t, src, "2024-01-02T00:00:00Z", "alice", "two")
	gitIn(t, src, nil, "rm", "-q", "-r", "sub")
	require.NoError(t, os.Symlink(outside, filepath.Join(src, "sub")))
	gitIn(t, src, nil, "add", "sub")
	commitAt(t, src, "2024-01-03T00:00:00Z", "alice", "three")
	dir := filepath.Join(t.TempDir(), "clone")
	gitIn(t, filepath.Dir(dir), nil, "clone", "-q", src, dir)

	ts, _ := newToolset(t, dir)
	ctx := context.Background()
	check := func(res *gittools.Result, err error) {
		t.Helper()
		require.NoError(t, err)
		require.Contains(t, res.Output, "-one\n+two\n", "the patch as the repository holds it")
		require.NotContains(t, res.Output, "Binary files")
		errPage, err := ts.Runner().ReadOutput(ctx, res.JobID, bgcmd.Stderr, artifacts.Page{Unit: artifacts.UnitChars, Limit: 2000})
		require.NoError(t, err)
		require.NotContains(t, errPage.Text, "leaked")
	}
	check(ts.Show(ctx, gittools.ShowArgs{Rev: c2}))
	check(ts.Diff(ctx, gittools.DiffArgs{Base: c2 + "~1", Head: c2}))
}

// A .gitmodules in the work tree that is a symlink to a file outside was
// read as configuration by git_log of a submodule path: git's error named
// the file and the line it could not parse. History tools read the
// repository's own .gitmodules, from its commits.
func TestHistoryToolsReadNoGitmodulesThroughASymlink(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "notes")
	require.NoError(t, os.WriteFile(secret, []byte("password = hunter2\n[x\n"), 0o600))
	dir := t.TempDir()
	gitIn(t, dir, nil, "init", "-q", "-b", "main")
	writeFile(t, dir, "a", "a\n")
	gitIn(t, dir, nil, "add", "-A")
	c1 := commitAt(t, dir, "2024-01-01T00:00:00Z", "alice", "one")
	gitIn(t, dir, nil, "update-index", "--add", "--cacheinfo", "160000,"+c1+",mod")
	commitAt(t, dir, "2024-01-02T00:00:00Z", "alice", "two")
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, ".gitmodules")))

	ts, _ := newToolset(t, dir)
	res, err := ts.Log(context.Background(), gittools.LogArgs{Path: "mod"})
	require.NoError(t, err)
	require.NotContains(t, res.Output, secret)
	require.NotContains(t, res.Output, "bad config")
	requireExited0(t, res)
}

// The repository's own .mailmap still applies where git applies one (the
// author line of git_show), read from HEAD now that the history tools
// read nothing of the work tree.
func TestHistoryToolsApplyTheCommittedMailmap(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, nil, "init", "-q", "-b", "main")
	writeFile(t, dir, ".mailmap", "Alice Mapped <alice@example.com>\n")
	gitIn(t, dir, nil, "add", "-A")
	commitAt(t, dir, "2024-01-01T00:00:00Z", "alice", "one")
	ts, _ := newToolset(t, dir)
	res, err := ts.Show(context.Background(), gittools.ShowArgs{})
	require.NoError(t, err)
	requireExited0(t, res)
	require.Contains(t, res.Output, "Author: Alice Mapped <alice@example.com>")
}
