package main

import (
	"time"

	"github.com/spf13/cobra"
)

func newStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status ID",
		Short: "Show a job's status (reading a settled job marks it read)",
		Long: `Show a job's state, exit code, timings, output sizes and the tail of its
output. Reading a settled job takes it off the session's "finished" counter.
With --json the status is one object with the contract's field names.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.openJobs(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer a.close()
			s, err := a.runner.Status(cmd.Context(), args[0])
			if err != nil {
				return jobErr(args[0], err)
			}
			out := cmd.OutOrStdout()
			if g.json {
				return writeJSON(out, s)
			}
			return writeStatus(out, styleFor(out), s, time.Now())
		},
	}
}
