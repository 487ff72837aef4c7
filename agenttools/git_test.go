package agenttools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
	"github.com/bgcmd/bgcmd/gittools"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/runner"
)

func TestGitToolsRunOnTheConfiguredRepository(t *testing.T) {
	t.Parallel()
	repo, first, second := testkit.GitRepo(t)
	h := newHarness(t)
	g, err := gittools.New(context.Background(), gittools.Options{Repo: repo, Session: "agent",
		Runner: runner.Options{Store: h.store, Home: h.home, SkipReconcile: true}})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close(context.Background()) })
	h.ts, err = agenttools.New(agenttools.Options{Runner: h.r, Git: g, Session: "agent"})
	require.NoError(t, err)

	var names []string
	for _, tl := range h.ts.Tools() {
		names = append(names, tl.Name)
		if strings.HasPrefix(tl.Name, "git_") {
			require.True(t, tl.Annotations.ReadOnly, tl.Name)
		}
	}
	require.Equal(t, gittools.Tools, names[8:])

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
