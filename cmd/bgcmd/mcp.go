//go:build !bgcmd_lean

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd/agenttools"
	"github.com/bgcmd/bgcmd/gittools"
	"github.com/bgcmd/bgcmd/runner"
)

func newMCPCmd(g *globals) *cobra.Command {
	var repo string
	cmd := &cobra.Command{
		Use:   "mcp [--repo DIR]",
		Short: mcpShort,
		Long: `Serve bgcmd's agent tools to an MCP client over stdin and stdout:
run_command_bg, command_status, command_output, command_wait, command_kill
and command_list, plus the six read-only git tools with --repo.

Commands are supervised detached: they keep running, and their true exit
status is recorded, when this server exits. The session (--session or
BGCMD_SESSION) names this agent's commands and counters. stdout carries the
protocol only; logs go to stderr. A bad frame (not JSON, not JSON-RPC 2.0,
or over 4 MiB) is answered with a JSON-RPC error (-32700 or -32600) and
skipped; the server goes on.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t := &frameTransport{in: os.Stdin, out: os.Stdout, limit: maxMCPFrameBytes}
			return serveMCP(cmd.Context(), g, repo, t, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&repo, "repo", "", "also serve the read-only git tools over the git work tree containing DIR")
	return cmd
}

// serveMCP serves the tools over t until the client disconnects or the
// process is told to stop (SIGINT, SIGTERM), logging to logw.
func serveMCP(ctx context.Context, g *globals, repo string, t mcp.Transport, logw io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(logw, nil))
	if ft, ok := t.(*frameTransport); ok && ft.log == nil {
		ft.log = log
	}
	g.longLived = true
	a, err := g.openApp(ctx, false)
	if err != nil {
		return err
	}
	defer a.close()
	if a.runner.Policy() == nil {
		log.Warn("no policy: every run_command_bg is refused until one exists", "help", noPolicyHelp(a.home))
	}
	var git *gittools.Toolset
	if repo != "" {
		if git, err = openGitTools(ctx, a, repo); err != nil {
			return err
		}
		defer git.Close(context.WithoutCancel(ctx))
	}
	ts, err := agenttools.New(agenttools.Options{Runner: a.runner, Git: git, Session: a.session})
	if err != nil {
		return err
	}
	log.Info("serving MCP on stdio", "home", a.home, "session", a.session,
		"policy", a.policyPath, "repo", repo, "tools", len(ts.Tools()))
	res := newJobResources(a.runner, a.session, log)
	if err := res.watch(ctx); err != nil {
		return err
	}
	err = newMCPServer(ts, log, res).Run(ctx, t)
	if ctx.Err() != nil {
		log.Info("stopped by signal")
		return nil
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		return fmt.Errorf("serve MCP: %w", err)
	}
	return nil
}

// openGitTools makes the git toolset over repo, supervising its git
// commands detached in the same home and session.
func openGitTools(ctx context.Context, a *app, repo string) (*gittools.Toolset, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the bgcmd binary for detached supervisors: %w", err)
	}
	git, err := gittools.New(ctx, gittools.Options{
		Repo:    repo,
		Session: a.session,
		Runner: runner.Options{Store: a.store, Home: a.home, Detached: true, Binary: bin,
			Session: a.session, SkipReconcile: true},
	})
	if err != nil {
		return nil, &usageError{fmt.Errorf("--repo %s: %w", repo, err)}
	}
	return git, nil
}
