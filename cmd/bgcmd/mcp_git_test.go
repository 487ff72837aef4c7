package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/agenttools"
)

// mcpGitRepo builds a repository with two commits ("first commit" adds
// notes.txt, "second commit" adds main.go) and returns its directory and
// the first commit's hash.
func mcpGitRepo(t *testing.T) (dir, first string) {
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
			"GIT_COMMITTER_NAME=Alice", "GIT_COMMITTER_EMAIL=alice@example.com"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\n"), 0o644))
	git("add", "-A")
	git("commit", "-q", "-m", "first commit")
	first = git("rev-parse", "HEAD")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644))
	git("add", "-A")
	git("commit", "-q", "-m", "second commit")
	return dir, first
}

func TestMCPServesTheGitToolsWithRepo(t *testing.T) {
	t.Parallel()
	repo, first := mcpGitRepo(t)
	s := newMCPEnv(t).start(t, "--repo", repo)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := s.cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var gitTools int
	for _, tl := range list.Tools {
		if strings.HasPrefix(tl.Name, "git_") {
			gitTools++
			require.True(t, tl.Annotations.ReadOnlyHint, tl.Name)
		}
	}
	require.Equal(t, 6, gitTools)

	log := mcpOK[agenttools.GitResult](s, "git_log", map[string]any{"max_count": 10})
	require.Contains(t, log.Output, "second commit")
	require.Contains(t, log.Output, "first commit")
	require.True(t, log.Status.Detached, "git runs under a detached supervisor too")

	mb := mcpOK[agenttools.GitResult](s, "git_merge_base", map[string]any{"a": "HEAD", "b": first})
	require.Equal(t, first, strings.TrimSpace(mb.Output))

	ls := mcpOK[agenttools.GitResult](s, "git_ls_files", map[string]any{"pattern": "*.txt"})
	require.Equal(t, "notes.txt\n", ls.Output)

	te, text := s.fail("git_show", map[string]any{"rev": "no-such-branch"})
	require.Equal(t, agenttools.CodeUnknownRevision, te.Code, text)
	te, _ = s.fail("git_diff", map[string]any{"paths": "notes.txt"})
	require.Equal(t, agenttools.CodeInvalidArguments, te.Code)

	l := mcpOK[agenttools.List](s, "command_list", nil)
	require.Zero(t, l.Counters.Finished, "git calls that finished were read")
}

func TestMCPRefusesARepoThatIsNotOne(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t)
	cmd := exec.Command(mcpBinary(t), "mcp", "--repo", t.TempDir())
	cmd.Env = append(os.Environ(), "BGCMD_HOME="+e.home, "BGCMD_POLICY="+e.policy)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, exitUsage, ee.ExitCode())
	require.Contains(t, string(out), "not a git work tree")
}
