package gittools_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
)

// The attacks in this file are repositories whose own files point git at
// something outside the repository: a mailmap, a configuration include, an
// object store, a git directory. Each test first proves the pointer works
// with plain git (so a clean result is not a broken fixture), then shows
// that the tools read nothing through it.

// outsideRepo is a second repository, outside the one served, holding a
// commit whose content is a secret.
type outsideRepo struct {
	dir    string
	commit string // the secret commit
	blob   string // the secret file's blob
}

const outsideSecret = "outside secret 7f3a\n"

func newOutsideRepo(t *testing.T) *outsideRepo {
	t.Helper()
	o := &outsideRepo{dir: t.TempDir()}
	gitIn(t, o.dir, nil, "init", "-q", "-b", "main")
	writeFile(t, o.dir, "secret.txt", outsideSecret)
	gitIn(t, o.dir, nil, "add", "-A")
	o.commit = commitAt(t, o.dir, "2024-07-01T00:00:00Z", "bob", "the outside secret")
	o.blob = gitIn(t, o.dir, nil, "rev-parse", "HEAD:secret.txt")
	return o
}

// appendConfig appends text to the repository's .git/config.
func appendConfig(t *testing.T, dir, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// requireOutside checks that err is the refusal of a repository file that
// points outside, and that it names that file.
func requireOutside(t *testing.T, err error, file string) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, gittools.ErrOutsideRepository, "got %v", err)
	var oe *gittools.OutsideError
	require.ErrorAs(t, err, &oe)
	require.Contains(t, err.Error(), file, "the error names the file holding the pointer")
	require.NotEmpty(t, oe.Target)
}

// allTools calls each of the six tools once with default arguments (blame
// on README.md) and returns each call's error.
func allTools(ts *gittools.Toolset) map[string]error {
	ctx := context.Background()
	out := map[string]error{}
	_, out["log"] = ts.Log(ctx, gittools.LogArgs{})
	_, out["show"] = ts.Show(ctx, gittools.ShowArgs{})
	_, out["diff"] = ts.Diff(ctx, gittools.DiffArgs{})
	_, out["blame"] = ts.Blame(ctx, gittools.BlameArgs{Path: "README.md"})
	_, out["merge-base"] = ts.MergeBase(ctx, gittools.MergeBaseArgs{A: "HEAD", B: "HEAD"})
	_, out["ls-files"] = ts.LsFiles(ctx, gittools.LsFilesArgs{})
	return out
}

func TestSecurityAMailmapOutsideRewritesNoAuthor(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	outside := filepath.Join(t.TempDir(), "mailmap")
	require.NoError(t, os.WriteFile(outside, []byte("Mallory Outside <alice@example.com>\n"), 0o644))
	// The in-tree .mailmap is a symlink to the same outside file.
	require.NoError(t, os.Symlink(outside, filepath.Join(repo.dir, ".mailmap")))
	appendConfig(t, repo.dir, fmt.Sprintf("[mailmap]\n\tfile = %s\n[log]\n\tmailmap = true\n", outside))
	require.Contains(t, gitIn(t, repo.dir, nil, "blame", "HEAD", "--", "README.md"), "Mallory Outside",
		"the fixture is armed: plain git reads the outside mailmap")

	ts, _ := newToolset(t, repo.dir)
	ctx := context.Background()
	res, err := ts.Blame(ctx, gittools.BlameArgs{Path: "README.md"})
	require.NoError(t, err)
	requireExited0(t, res)
	require.NotContains(t, res.Output, "Mallory")
	require.Contains(t, res.Output, "Alice Example")

	res, err = ts.Show(ctx, gittools.ShowArgs{Rev: repo.c1, Stat: true})
	require.NoError(t, err)
	requireExited0(t, res)
	require.NotContains(t, res.Output, "Mallory")
	require.Contains(t, res.Output, "Author: Alice Example <alice@example.com>")

	res, err = ts.Log(ctx, gittools.LogArgs{Author: "Mallory"})
	require.NoError(t, err)
	requireExited0(t, res)
	require.Zero(t, res.Status.Stdout.Bytes, "the author filter does not match names from the outside mailmap: %s", res.Output)
}

func TestSecurityAConfigIncludeOutsideIsRefused(t *testing.T) {
	t.Parallel()
	// The outside configuration makes blame print e-mail addresses: a
	// visible sign that git read it.
	outsideDir := t.TempDir()
	outsideCfg := filepath.Join(outsideDir, "evil.cfg")
	require.NoError(t, os.WriteFile(outsideCfg, []byte("[blame]\n\tshowEmail = true\n"), 0o644))

	cases := []struct {
		name   string
		config func(t *testing.T, dir string) string // returns the file that must be named
	}{
		{"include.path absolute", func(t *testing.T, dir string) string {
			appendConfig(t, dir, fmt.Sprintf("[include]\n\tpath = %s\n", outsideCfg))
			return filepath.Join(".git", "config")
		}},
		{"include.path relative", func(t *testing.T, dir string) string {
			rel, err := filepath.Rel(filepath.Join(dir, ".git"), outsideCfg)
			require.NoError(t, err)
			appendConfig(t, dir, fmt.Sprintf("[include]\n\tpath = %s\n", rel))
			return filepath.Join(".git", "config")
		}},
		{"a relative include through a work-tree symlink, taken lexically inside", func(t *testing.T, dir string) string {
			// root/.git/../lnk/.. is / for the kernel and git, root for
			// filepath.Join.
			require.NoError(t, os.Symlink("/", filepath.Join(dir, "lnk")))
			appendConfig(t, dir, fmt.Sprintf("[include]\n\tpath = ../lnk/..%s\n", outsideCfg))
			return filepath.Join(".git", "config")
		}},
		{"includeIf gitdir", func(t *testing.T, dir string) string {
			appendConfig(t, dir, fmt.Sprintf("[includeIf \"gitdir:/\"]\n\tpath = %s\n", outsideCfg))
			return filepath.Join(".git", "config")
		}},
		{"an include inside that includes one outside", func(t *testing.T, dir string) string {
			writeFile(t, dir, ".git/inner.cfg", fmt.Sprintf("[include]\n\tpath = %s\n", outsideCfg))
			appendConfig(t, dir, "[include]\n\tpath = inner.cfg\n")
			return filepath.Join(".git", "inner.cfg")
		}},
		{"a symlinked include inside", func(t *testing.T, dir string) string {
			require.NoError(t, os.Symlink(outsideCfg, filepath.Join(dir, ".git", "link.cfg")))
			appendConfig(t, dir, "[include]\n\tpath = link.cfg\n")
			return "link.cfg"
		}},
		{"a symlinked .git/config", func(t *testing.T, dir string) string {
			cfg := filepath.Join(dir, ".git", "config")
			b, err := os.ReadFile(cfg)
			require.NoError(t, err)
			moved := filepath.Join(t.TempDir(), "config")
			require.NoError(t, os.WriteFile(moved, append(b, []byte("[blame]\n\tshowEmail = true\n")...), 0o644))
			require.NoError(t, os.Remove(cfg))
			require.NoError(t, os.Symlink(moved, cfg))
			return filepath.Join(".git", "config")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo := newHistoryRepo(t)
			file := c.config(t, repo.dir)
			require.Contains(t, gitIn(t, repo.dir, nil, "blame", "HEAD", "--", "README.md"), "<alice@example.com>",
				"the fixture is armed: plain git reads the outside configuration")
			_, err := gittools.New(context.Background(), gittools.Options{Repo: repo.dir, Runner: newRunnerTemplate(t)})
			requireOutside(t, err, file)
		})
		t.Run(c.name+" after the toolset was made", func(t *testing.T) {
			t.Parallel()
			repo := newHistoryRepo(t)
			ts, st := newToolset(t, repo.dir)
			file := c.config(t, repo.dir)
			for tool, err := range allTools(ts) {
				requireOutside(t, err, file)
				_ = tool
			}
			require.Zero(t, jobCount(t, st), "no git job ran")
		})
	}
}

func TestSecurityAlternatesOutsideAreRefused(t *testing.T) {
	t.Parallel()
	o := newOutsideRepo(t)
	arm := func(t *testing.T, dir string) {
		writeFile(t, dir, ".git/objects/info/alternates", filepath.Join(o.dir, ".git", "objects")+"\n")
		require.Equal(t, strings.TrimSuffix(outsideSecret, "\n"), gitIn(t, dir, nil, "show", o.blob),
			"the fixture is armed: plain git reads the outside objects")
	}
	t.Run("at New", func(t *testing.T) {
		t.Parallel()
		repo := newHistoryRepo(t)
		arm(t, repo.dir)
		_, err := gittools.New(context.Background(), gittools.Options{Repo: repo.dir, Runner: newRunnerTemplate(t)})
		requireOutside(t, err, filepath.Join(".git", "objects", "info", "alternates"))
	})
	t.Run("on every call", func(t *testing.T) {
		t.Parallel()
		repo := newHistoryRepo(t)
		ts, st := newToolset(t, repo.dir)
		arm(t, repo.dir)
		_, err := ts.Show(context.Background(), gittools.ShowArgs{Rev: o.blob})
		requireOutside(t, err, "alternates")
		require.NotErrorIs(t, err, gittools.ErrUnknownRevision, "refused before the revision is looked up")
		for _, err := range allTools(ts) {
			requireOutside(t, err, "alternates")
		}
		require.Zero(t, jobCount(t, st))
	})
	t.Run("a relative entry that climbs out", func(t *testing.T) {
		t.Parallel()
		repo := newHistoryRepo(t)
		ts, _ := newToolset(t, repo.dir)
		rel, err := filepath.Rel(filepath.Join(repo.dir, ".git", "objects"), filepath.Join(o.dir, ".git", "objects"))
		require.NoError(t, err)
		writeFile(t, repo.dir, ".git/objects/info/alternates", "# a comment\n\n"+rel+"\n")
		_, err = ts.Show(context.Background(), gittools.ShowArgs{Rev: o.blob})
		requireOutside(t, err, "alternates")
	})
}

func TestSecurityAGitDirOutsideIsRefused(t *testing.T) {
	t.Parallel()
	o := newOutsideRepo(t)
	t.Run("a .git file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeFile(t, dir, ".git", "gitdir: "+filepath.Join(o.dir, ".git")+"\n")
		require.Contains(t, gitIn(t, dir, nil, "log", "--format=%s"), "the outside secret",
			"the fixture is armed: plain git reads the outside repository")
		_, err := gittools.New(context.Background(), gittools.Options{Repo: dir, Runner: newRunnerTemplate(t)})
		requireOutside(t, err, ".git")
	})
	t.Run("a .git file written after the toolset was made", func(t *testing.T) {
		t.Parallel()
		repo := newHistoryRepo(t)
		ts, st := newToolset(t, repo.dir)
		require.NoError(t, os.Rename(filepath.Join(repo.dir, ".git"), filepath.Join(t.TempDir(), "moved")))
		writeFile(t, repo.dir, ".git", "gitdir: "+filepath.Join(o.dir, ".git")+"\n")
		for _, err := range allTools(ts) {
			requireOutside(t, err, ".git")
		}
		require.Zero(t, jobCount(t, st))
	})
	t.Run("a .git symlink", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		require.NoError(t, os.Symlink(filepath.Join(o.dir, ".git"), filepath.Join(dir, ".git")))
		_, err := gittools.New(context.Background(), gittools.Options{Repo: dir, Runner: newRunnerTemplate(t)})
		requireOutside(t, err, ".git")
	})
	t.Run("a linked work tree outside its repository", func(t *testing.T) {
		t.Parallel()
		// An outside repository of its own: adding a work tree to the
		// shared one would race the commondir case's `git log --all`,
		// which reads every work tree's HEAD (it failed with "bad object
		// worktrees/wt/HEAD" when it read one half added).
		own := newOutsideRepo(t)
		wt := filepath.Join(t.TempDir(), "wt")
		gitIn(t, own.dir, nil, "worktree", "add", "-q", "--detach", wt)
		_, err := gittools.New(context.Background(), gittools.Options{Repo: wt, Runner: newRunnerTemplate(t)})
		requireOutside(t, err, ".git")
	})
	t.Run("commondir", func(t *testing.T) {
		t.Parallel()
		repo := newHistoryRepo(t)
		ts, st := newToolset(t, repo.dir)
		writeFile(t, repo.dir, ".git/commondir", filepath.Join(o.dir, ".git")+"\n")
		require.Contains(t, gitIn(t, repo.dir, nil, "log", "--all", "--format=%s"), "the outside secret",
			"the fixture is armed: plain git reads the outside repository")
		for _, err := range allTools(ts) {
			requireOutside(t, err, "commondir")
		}
		require.Zero(t, jobCount(t, st))
	})
	t.Run("a symlink inside .git", func(t *testing.T) {
		t.Parallel()
		repo := newHistoryRepo(t)
		ts, _ := newToolset(t, repo.dir)
		// A loose object of the outside repository, linked in.
		rel := filepath.Join("objects", o.blob[:2], o.blob[2:])
		require.NoError(t, os.MkdirAll(filepath.Join(repo.dir, ".git", "objects", o.blob[:2]), 0o755))
		require.NoError(t, os.Symlink(filepath.Join(o.dir, ".git", rel), filepath.Join(repo.dir, ".git", rel)))
		require.Equal(t, strings.TrimSuffix(outsideSecret, "\n"), gitIn(t, repo.dir, nil, "show", o.blob),
			"the fixture is armed: plain git reads the linked object")
		_, err := ts.Show(context.Background(), gittools.ShowArgs{Rev: o.blob})
		requireOutside(t, err, rel)
	})
}

func TestSecurityCoreWorktreeOutsideIsNotRead(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	ts, _ := newToolset(t, repo.dir)
	outside := t.TempDir()
	writeFile(t, outside, "README.md", "outside work tree 91c2\n")
	gitIn(t, repo.dir, nil, "config", "core.worktree", outside)

	res, err := ts.Diff(context.Background(), gittools.DiffArgs{})
	require.NoError(t, err)
	requireExited0(t, res)
	require.NotContains(t, res.Output, "outside work tree")
	require.Empty(t, res.Output, "the served work tree is clean")
}

func TestSecurityASubmoduleGitFileOutsideIsNotRead(t *testing.T) {
	t.Parallel()
	o := newOutsideRepo(t)
	first := o.commit
	writeFile(t, o.dir, "secret.txt", "moved on\n")
	gitIn(t, o.dir, nil, "add", "-A")
	moved := commitAt(t, o.dir, "2024-08-01T00:00:00Z", "bob", "moved on")

	repo := newHistoryRepo(t)
	gitIn(t, repo.dir, nil, "update-index", "--add", "--cacheinfo", "160000,"+first+",sub")
	commitAt(t, repo.dir, "2024-09-01T00:00:00Z", "alice", "add a submodule")
	writeFile(t, repo.dir, "sub/.git", "gitdir: "+filepath.Join(o.dir, ".git")+"\n")
	require.Contains(t, gitIn(t, repo.dir, nil, "diff", "--ignore-submodules=dirty"), moved,
		"the fixture is armed: plain git reads the outside repository's HEAD")

	ts, _ := newToolset(t, repo.dir)
	for _, a := range []gittools.DiffArgs{{}, {Base: "HEAD"}, {Stat: true}} {
		res, err := ts.Diff(context.Background(), a)
		require.NoError(t, err)
		requireExited0(t, res)
		require.NotContains(t, res.Output, moved, "%+v", a)
	}
}

// TestSecurityRefusalsNameTheFileAndHowToRecover checks the message a person
// or a model reads.
func TestSecurityRefusalsNameTheFileAndHowToRecover(t *testing.T) {
	t.Parallel()
	o := newOutsideRepo(t)
	repo := newHistoryRepo(t)
	writeFile(t, repo.dir, ".git/objects/info/alternates", filepath.Join(o.dir, ".git", "objects")+"\n")
	_, err := gittools.New(context.Background(), gittools.Options{Repo: repo.dir, Runner: newRunnerTemplate(t)})
	var oe *gittools.OutsideError
	require.True(t, errors.As(err, &oe), "got %v", err)
	require.Equal(t, filepath.Join(ts(t, repo.dir), ".git", "objects", "info", "alternates"), oe.File)
	require.Contains(t, oe.Target, o.dir[strings.LastIndexByte(o.dir, '/')+1:])
	require.Contains(t, err.Error(), "outside the repository")
	require.Contains(t, err.Error(), "remove")
}

// ts is dir with its symlinks resolved, as a Toolset's root is.
func ts(t *testing.T, dir string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	return real
}

func TestPointersThatStayInsideAreServed(t *testing.T) {
	t.Parallel()
	repo := newHistoryRepo(t)
	require.NoError(t, os.Rename(filepath.Join(repo.dir, ".git"), filepath.Join(repo.dir, ".realgit")))
	require.NoError(t, os.Symlink(".realgit", filepath.Join(repo.dir, ".git")))
	writeFile(t, repo.dir, ".git/extra.cfg", "[blame]\n\tshowEmail = true\n")
	appendConfig(t, repo.dir, "[include]\n\tpath = extra.cfg\n[includeIf \"onbranch:main\"]\n\tpath = extra.cfg\n")
	require.NoError(t, os.Symlink("extra.cfg", filepath.Join(repo.dir, ".git", "link.cfg")))
	writeFile(t, repo.dir, ".git/objects/info/alternates", "# no alternates\n")
	ts, _ := newToolset(t, repo.dir)
	res, err := ts.Blame(context.Background(), gittools.BlameArgs{Path: "README.md"})
	require.NoError(t, err)
	requireExited0(t, res)
	require.Contains(t, res.Output, "<alice@example.com>", "the include inside the repository applies")
}
