package main

import (
	"context"
	"time"

	"github.com/bgcmd/bgcmd"

	"github.com/spf13/cobra"
)

func newStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "status ID",
		Example: `  bgcmd status 0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c
  bgcmd status 3f0e2d4a      # any unique prefix or suffix of 4+ characters`,
		Short: "Show a job's status (reading a settled job marks it read)",
		Long: `Show a job's state, exit code, timings, output sizes and the tail of its
output. Reading a settled job takes it off the session's "finished" counter.
With --json the status is one object with the contract's field names.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeJobIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.openJobs(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer a.close()
			id, err := a.resolve(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			s, err := a.runner.Read(cmd.Context(), id)
			if err != nil {
				return jobErr(id, err)
			}
			out := cmd.OutOrStdout()
			if g.json {
				return writeJSON(out, s)
			}
			return writeStatus(out, styleFor(out), s, time.Now())
		},
	}
}

// readSettled returns s as a reader who takes it in sees it: a settled job
// is marked read (Runner.Read), so the counters leave it out; a running one
// is returned as is.
func (a *app) readSettled(ctx context.Context, s *bgcmd.Status) (*bgcmd.Status, error) {
	if !s.Settled() {
		return s, nil
	}
	return a.runner.Read(ctx, s.ID)
}
