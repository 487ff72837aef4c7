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
	"github.com/bgcmd/bgcmd/internal/testkit"
)

func TestMCPServesTheGitToolsWithRepo(t *testing.T) {
	t.Parallel()
	repo, first, _ := testkit.GitRepo(t)
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
	require.Contains(t, log.Hint, "command_output {task_id: "+log.JobID+", stream: stdout}", "the hint speaks the agent tools")
	require.NotContains(t, log.Hint, "bgcmd output")
	require.Equal(t, "git log --max-count 10", log.Display)

	mb := mcpOK[agenttools.GitResult](s, "git_merge_base", map[string]any{"a": "HEAD", "b": first})
	require.Equal(t, first, strings.TrimSpace(mb.Output))

	ls := mcpOK[agenttools.GitResult](s, "git_ls_files", map[string]any{"pattern": "*.txt"})
	require.Equal(t, "notes.txt\n", ls.Output)

	te, text := s.fail("git_show", map[string]any{"rev": "no-such-branch"})
	require.Equal(t, agenttools.CodeUnknownRevision, te.Code, text)
	require.Contains(t, te.Hint, "git_log lists commits", "the recovery names the agent tool")
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

func TestSecurityMCPGitToolsRefuseARepositoryThatPointsOutside(t *testing.T) {
	t.Parallel()
	repo, _, _ := testkit.GitRepo(t)
	other, _, _ := testkit.GitRepo(t)
	s := newMCPEnv(t).start(t, "--repo", repo)
	alt := filepath.Join(repo, ".git", "objects", "info", "alternates")
	require.NoError(t, os.WriteFile(alt, []byte(filepath.Join(other, ".git", "objects")+"\n"), 0o644))

	te, text := s.fail("git_log", map[string]any{"max_count": 1})
	require.Equal(t, "repository_refused", te.Code, text)
	require.Contains(t, te.Message, alt, "the message names the file")
	require.Contains(t, te.Hint, "operator")
	l := mcpOK[agenttools.List](s, "command_list", nil)
	require.Empty(t, l.Commands, "no git job ran")
}
