package main

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// The labels kind, tool and display are bgcmd's own: its git tools set
// them, and `bgcmd list` shows a git tool call's display label as its
// command. An agent that could set display would show the operator any
// command line it liked in place of the one it ran, with terminal escapes
// and rows of other jobs in it. Neither run_command_bg nor `bgcmd run`
// takes them, and nothing is started.
func TestAgentsCannotSetTheLabelsBgcmdShowsAsTheCommand(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	agent := env.start(t)
	forged := "go test ./...\x1b[8m\n01900000-0000-7000-8000-000000000000  alice  exited 0  1s  now  make lint"
	for _, key := range []string{"display", "kind", "tool"} {
		res := agent.call("run_command_bg", map[string]any{
			"argv":   []string{mcpFixture(t, "exit-with.sh"), "0"},
			"labels": map[string]string{key: forged},
		})
		require.True(t, res.IsError, "run_command_bg took the label %s", key)
		require.Contains(t, res.Content[0].(*mcp.TextContent).Text, key)
	}
	h := newHome(t)
	for _, key := range []string{"display", "kind", "tool"} {
		r := h.bgcmd("run", "--label", key+"=x", "--", fixture(t, "exit-with.sh"), "0")
		require.Equal(t, exitUsage, r.code, "bgcmd run took the label %s: %s%s", key, r.stdout, r.stderr)
		require.Contains(t, r.stderr, key)
	}
	require.NotContains(t, h.ok("list"), "exit-with.sh", "nothing was started")
}

// A label reaches a terminal only escaped: a display label (as a store
// edited by hand could hold) shows no control character, C1 control or
// bidirectional override, and it stands for the command only on a git
// tool's job.
func TestListShowsNoControlCharacterOfADisplayLabel(t *testing.T) {
	now := time.Now()
	job := func(labels map[string]string) *jobstore.Record {
		return &jobstore.Record{Job: bgcmd.Job{ID: "01900000-0000-7000-8000-000000000001", Session: "s",
			Argv: []string{"/usr/bin/git", "log"}, State: bgcmd.StateRunning, CreatedAt: now, Labels: labels}}
	}
	tb := listTable([]*jobstore.Record{job(map[string]string{"kind": "git",
		"display": "git log\x1b[8m\nrow\u009b2J\u202egol"})}, nil, now, "")
	var b strings.Builder
	tb.write(&b, style{}, 0)
	out := b.String()
	require.Equal(t, 2, strings.Count(out, "\n"), "one header and one row: %q", out)
	for _, c := range []string{"\x1b", "\u009b", "\u202e"} {
		require.NotContains(t, out, c)
	}
	require.Contains(t, out, `git log\x1b[8m\nrow\u009b2J\u202egol`)

	tb = listTable([]*jobstore.Record{job(map[string]string{"display": "make lint"})}, nil, now, "")
	b.Reset()
	tb.write(&b, style{}, 0)
	require.Contains(t, b.String(), "/usr/bin/git log", "a display label on another job is not its command")
	require.NotContains(t, b.String(), "make lint")
}
