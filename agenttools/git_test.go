package agenttools_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
	"github.com/bgcmd/bgcmd/gittools"
	"github.com/bgcmd/bgcmd/runner"
)

// gitRepo builds a repository with two commits: "first commit" adds
// notes.txt, "second commit" changes it and adds main.go. It returns the
// directory and the two hashes.
func gitRepo(t *testing.T) (dir, first, second string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir = t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=Alice", "GIT_AUTHOR_EMAIL=alice@example.com",
			"GIT_COMMITTER_NAME=Alice", "GIT_COMMITTER_EMAIL=alice@example.com",
			"GIT_AUTHOR_DATE=2024-01-10T12:00:00Z", "GIT_COMMITTER_DATE=2024-01-10T12:00:00Z"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\n"), 0o644))
	git("add", "-A")
	git("commit", "-q", "-m", "first commit")
	first = git("rev-parse", "HEAD")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\ntwo\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644))
	git("add", "-A")
	git("commit", "-q", "-m", "second commit")
	return dir, first, git("rev-parse", "HEAD")
}

func TestGitToolsRunOnTheConfiguredRepository(t *testing.T) {
	t.Parallel()
	repo, first, second := gitRepo(t)
	h := newHarness(t)
	g, err := gittools.New(gittools.Options{Repo: repo, Session: "agent",
		Runner: runner.Options{Store: h.store, Home: h.home, SkipReconcile: true}})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	h.ts, err = agenttools.New(agenttools.Options{Runner: h.r, Git: g, Session: "agent"})
	require.NoError(t, err)

	var names []string
	for _, tl := range h.ts.Tools() {
		names = append(names, tl.Name)
		if strings.HasPrefix(tl.Name, "git_") {
			require.True(t, tl.Annotations.ReadOnly, tl.Name)
		}
	}
	require.Equal(t, gittools.Tools, names[6:])

	log := ok[*agenttools.GitResult](h, "git_log", map[string]any{"max_count": 5})
	require.Contains(t, log.Output, second)
	require.Contains(t, log.Output, "second commit")
	require.Contains(t, log.Output, "first commit")
	require.Equal(t, bgcmd.Counters{}, log.Counters, "a git call that finished was read")

	mb := ok[*agenttools.GitResult](h, "git_merge_base", map[string]any{"a": "HEAD", "b": first})
	require.Equal(t, first, strings.TrimSpace(mb.Output))

	diff := ok[*agenttools.GitResult](h, "git_diff", map[string]any{"base": first, "head": "HEAD", "stat": true})
	require.Contains(t, diff.Output, "main.go")

	ls := ok[*agenttools.GitResult](h, "git_ls_files", map[string]any{"pattern": "*.go"})
	require.Equal(t, "main.go\n", ls.Output)

	blame := ok[*agenttools.GitResult](h, "git_blame", map[string]any{"path": "notes.txt", "start_line": 2, "end_line": 2})
	require.Contains(t, blame.Output, "two")

	show := ok[*agenttools.GitResult](h, "git_show", map[string]any{"rev": first, "path": "notes.txt"})
	require.Equal(t, "one\n", show.Output)

	// The full output is a job like any other.
	page := ok[*agenttools.OutputPage](h, "command_output", map[string]any{"task_id": log.JobID, "stream": "stdout"})
	require.Equal(t, log.Output, *page.Text)

	te := h.fail("git_show", map[string]any{"rev": "no-such-branch"})
	require.Equal(t, agenttools.CodeUnknownRevision, te.Code, te.Text())
	te = h.fail("git_log", map[string]any{"ref": "--output=/tmp/x"})
	require.Equal(t, agenttools.CodeInvalidGitArgument, te.Code, te.Text())
	te = h.fail("git_blame", map[string]any{"rev": "HEAD"})
	require.Equal(t, agenttools.CodeInvalidArguments, te.Code)
	require.Contains(t, te.Message, `missing required argument "path"`)
	te = h.fail("git_diff", map[string]any{"context": 1000})
	require.Contains(t, te.Message, "above its maximum of 100")
}
