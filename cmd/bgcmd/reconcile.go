package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newReconcileCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "reconcile",
		Short: "Settle jobs whose supervisor died, now",
		Long: `Look at this host's running jobs: a job whose supervisor is alive is left
alone; one whose supervisor is gone is settled from its exit record when
there is one (the true exit status), else its leftover process group is
killed, its logs are banked and it becomes orphaned. Every bgcmd command
that opens the store does this too; reconcile reports what it did.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.openJobs(cmd.Context(), true)
			if err != nil {
				return err
			}
			defer a.close()
			rep, err := a.runner.Reconcile(cmd.Context())
			if rep == nil {
				return err
			}
			out := cmd.OutOrStdout()
			if g.json {
				if werr := writeJSON(out, rep); werr != nil {
					return werr
				}
				return err
			}
			if _, werr := fmt.Fprintf(out, "checked %d running job(s): %d alive, %d settled from an exit record, %d orphaned, %d settled meanwhile by another process\n",
				rep.Checked, rep.Alive, rep.FromExitRecord, rep.Orphaned, rep.Lost); werr != nil {
				return werr
			}
			return err
		},
	}
}
