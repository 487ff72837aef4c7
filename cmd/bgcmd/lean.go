//go:build bgcmd_lean

package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd/internal/launch"
)

// This file stands in for mcp.go, git.go and ui.go in bgcmd's lean build
// (launch.LeanTag, as make build builds bgcmd): their commands link the MCP
// SDK, net/http, the web view and the git tools, whose packages every
// `bgcmd run` would otherwise initialise. Here each is a command that hands
// the whole command line, its flags and help included, to bgcmd-full
// beside bgcmd, which serves it in this same process.

func newMCPCmd(*globals) *cobra.Command { return handedCmd("mcp", mcpShort) }
func newGitCmd(*globals) *cobra.Command { return handedCmd("git", gitShort) }
func newUICmd(*globals) *cobra.Command  { return handedCmd("ui", uiShort) }

// handedCmd is the command name as a lean bgcmd has it: one that hands
// the command line to bgcmd-full, for its help and the shell completion of
// its arguments as for the command itself.
func handedCmd(name, short string) *cobra.Command {
	why := errors.New("bgcmd " + name + " is served by " + launch.FullName)
	cmd := &cobra.Command{
		Use:                name,
		Short:              short,
		DisableFlagParsing: true,
		RunE:               func(*cobra.Command, []string) error { return unparsed(handOver(why)) },
		// Shell completion of its arguments (`bgcmd __complete git …`) is
		// bgcmd-full's too.
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			fmt.Fprintln(os.Stderr, "bgcmd:", handOver(why))
			return nil, cobra.ShellCompDirectiveError
		},
	}
	cmd.SetHelpFunc(func(*cobra.Command, []string) {
		err := unparsed(handOver(why))
		os.Exit(report(err, err.asJSON))
	})
	return cmd
}
