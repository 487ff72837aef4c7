package gittools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// Pointers that confine read otherwise than git does, each found by an
// attack review: each leads git into a repository outside.

// tryToolset is newToolset that returns New's error instead of failing.
func tryToolset(t *testing.T, repo string) (*gittools.Toolset, error) {
	t.Helper()
	home := t.TempDir()
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: filepath.Join(home, "bgcmd.db")})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	ts, err := gittools.New(context.Background(), gittools.Options{Repo: repo,
		Runner: runner.Options{Store: st, Home: home, Detached: false}})
	if err == nil {
		t.Cleanup(func() { ts.Close(context.Background()) })
	}
	return ts, err
}

// git reads a .git file's whole content after "gitdir: " (only trailing
// CR/LF stripped), so an embedded newline is part of the path; confine
// checked the first line only. With a directory named "x\n" in the work
// tree, "gitdir: x\n/../../outside/.git" was "x" to confine (inside) and
// the outside repository to git.
func TestAGitFileWithANewlineIsRefused(t *testing.T) {
	t.Parallel()
	o := newOutsideRepo(t)
	parent := t.TempDir()
	dir := filepath.Join(parent, "wt")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "x\n"), 0o755))
	// What confine checks: an empty directory "x" (no symlink, no
	// alternates, no configuration).
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "x"), 0o755))
	rel, err := filepath.Rel(parent, filepath.Join(o.dir, ".git"))
	require.NoError(t, err)
	writeFile(t, dir, ".git", "gitdir: x\n/../../"+rel+"\n")
	require.Contains(t, gitIn(t, dir, nil, "log", "--format=%s"), "the outside secret",
		"the fixture is armed: plain git reads the outside repository")

	ts, err := tryToolset(t, dir)
	if err == nil {
		ctx := context.Background()
		ls, lerr := ts.LsFiles(ctx, gittools.LsFilesArgs{})
		require.NoError(t, lerr)
		diff, derr := ts.Diff(ctx, gittools.DiffArgs{})
		require.NoError(t, derr)
		t.Fatalf("New accepted a .git file that leads outside;\ngit_ls_files printed %q\ngit_diff printed %q",
			ls.Output, diff.Output)
	}
	requireOutside(t, err, ".git")
}

// git's alternates parser takes a quoted entry up to its closing quote and
// skips one character after it; confine unquoted with strconv.Unquote,
// which fails on the trailing character, and then checked the entry as a
// relative path beginning with '"' (below objects/, so inside).
func TestAQuotedAlternateIsRefused(t *testing.T) {
	t.Parallel()
	o := newOutsideRepo(t)
	repo := newHistoryRepo(t)
	ts, st := newToolset(t, repo.dir)
	writeFile(t, repo.dir, ".git/objects/info/alternates", `"`+filepath.Join(o.dir, ".git", "objects")+`" `+"\n")
	requireOutsideObjectsRefused(t, repo.dir, o, ts, st)

	_, err := tryToolset(t, repo.dir)
	requireOutside(t, err, "alternates")
}

// git keeps a trailing CR of an alternates line as part of the path;
// confine stripped it. A work-tree symlink "sub/link\r" to an outside
// object store was never looked at: confine checked "sub/link" (which does
// not exist, so it was taken as inside), and noSymlinkOut walks only .git.
func TestAnAlternateEndingInCRIsRefused(t *testing.T) {
	t.Parallel()
	o := newOutsideRepo(t)
	repo := newHistoryRepo(t)
	ts, st := newToolset(t, repo.dir)
	require.NoError(t, os.MkdirAll(filepath.Join(repo.dir, "sub"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(o.dir, ".git", "objects"), filepath.Join(repo.dir, "sub", "link\r")))
	writeFile(t, repo.dir, ".git/objects/info/alternates", "../../sub/link\r\n")
	requireOutsideObjectsRefused(t, repo.dir, o, ts, st)
}

// requireOutsideObjectsRefused checks that the fixture in dir is armed
// (plain git there shows o's blob through the alternates) and that
// git_show of that blob is refused over the alternates file, with no job
// run.
func requireOutsideObjectsRefused(t *testing.T, dir string, o *outsideRepo, ts *gittools.Toolset, st *jobstore.Store) {
	t.Helper()
	require.Equal(t, strings.TrimSuffix(outsideSecret, "\n"), gitIn(t, dir, nil, "show", o.blob),
		"the fixture is armed: plain git reads the outside objects")
	res, err := ts.Show(context.Background(), gittools.ShowArgs{Rev: o.blob})
	if err == nil {
		t.Fatalf("git_show of an outside blob ran (job %s) and printed %q", res.JobID, res.Output)
	}
	requireOutside(t, err, "alternates")
	require.Zero(t, jobCount(t, st))
}

// The same .git file written by an agent after the toolset was made (the
// MCP server's case): every call's confine check passed it.
func TestAGitFileWithANewlineWrittenAfterNewIsRefused(t *testing.T) {
	t.Parallel()
	o := newOutsideRepo(t)
	repo := newHistoryRepo(t)
	ts, _ := newToolset(t, repo.dir)
	require.NoError(t, os.Rename(filepath.Join(repo.dir, ".git"), filepath.Join(t.TempDir(), "moved")))
	require.NoError(t, os.MkdirAll(filepath.Join(repo.dir, "x\n"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repo.dir, "x"), 0o755))
	rel, err := filepath.Rel(filepath.Dir(repo.dir), filepath.Join(o.dir, ".git"))
	require.NoError(t, err)
	writeFile(t, repo.dir, ".git", "gitdir: x\n/../../"+rel+"\n")

	res, err := ts.Diff(context.Background(), gittools.DiffArgs{})
	if err == nil {
		t.Fatalf("git_diff ran (job %s) and printed %q", res.JobID, res.Output)
	}
	requireOutside(t, err, ".git")
}
