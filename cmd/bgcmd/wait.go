package main

import "github.com/spf13/cobra"

func newWaitCmd(g *globals) *cobra.Command {
	var timeout string
	cmd := &cobra.Command{
		Use:   "wait ID [--timeout DUR]",
		Short: "Wait for a job to settle and exit with its exit code",
		Long: `Wait until the job settles, print its status, and exit as the command did.
--timeout bounds the wait, not the command: when it elapses the job keeps
running, its current status is printed and wait exits 5.
On a terminal, a progress line (elapsed time, bytes so far) is drawn on
stderr; nothing extra is printed when stderr is not a terminal.

` + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			limit := forever
			if timeout != "" {
				d, err := parseDuration("--timeout", timeout)
				if err != nil {
					return err
				}
				if d > 0 {
					limit = d
				}
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			a, err := g.openJobs(ctx, false)
			if err != nil {
				return err
			}
			defer a.close()
			return g.awaitAndReport(ctx, cmd, a, args[0], limit)
		},
	}
	cmd.Flags().StringVar(&timeout, "timeout", "", "give up waiting after this long (default: wait until it settles)")
	return cmd
}
