package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newReconcileCmd(g *globals) *cobra.Command {
	var recount bool
	cmd := &cobra.Command{
		Use:   "reconcile",
		Short: "Settle jobs whose supervisor died, now",
		Long: `Look at this host's running jobs: a job whose supervisor is alive is left
alone; one whose supervisor is gone is settled from its exit record when
there is one (the true exit status), else its leftover process group is
killed, its logs are banked and it becomes orphaned. Every bgcmd command
that opens the store does this too; reconcile reports what it did.

With --recount it also rebuilds, from the jobs table, the counts bgcmd
keeps beside it: each session's running, finished-unread and queued jobs,
and the web view's hourly charts. bgcmd's own writes keep them exact; run
it after anything else has written the jobs table (a row deleted by hand).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.openJobs(cmd.Context(), true)
			if err != nil {
				return err
			}
			defer a.close()
			if recount {
				if err := a.store.Recount(cmd.Context()); err != nil {
					return err
				}
			}
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
			if recount {
				if _, werr := fmt.Fprintln(out, "recounted the session counters and the charts' hourly roll-up from the jobs table"); werr != nil {
					return werr
				}
			}
			if _, werr := fmt.Fprintf(out, "checked %d running job(s): %d alive, %d settled from an exit record, %d orphaned, %d settled meanwhile by another process\n",
				rep.Checked, rep.Alive, rep.FromExitRecord, rep.Orphaned, rep.Lost); werr != nil {
				return werr
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&recount, "recount", false, "rebuild the session counters and chart roll-ups from the jobs table first")
	return cmd
}
