package main

import "github.com/spf13/cobra"

func newWaitCmd(g *globals) *cobra.Command {
	var timeout string
	var ready readyFlags
	var anyOf bool
	cmd := &cobra.Command{
		Use:   "wait ID... [--any] [--timeout DUR] [--until-output REGEX [--stream S] [--from-line N]]",
		Short: "Wait for jobs to settle (or a job to print a line) and exit with the exit code",
		Long: `Wait until the job settles, print its status, and exit as the command did.
--timeout bounds the wait, not the command: when it elapses the job keeps
running, its current status is printed and wait exits 5.
On a terminal, a progress line (elapsed time, bytes so far) is drawn on
stderr; nothing extra is printed when stderr is not a terminal.

With --until-output REGEX, wait for readiness instead: return as soon as a
line of the job's output matches the regular expression (RE2 syntax, as
--grep of output), print the match as STREAM:LINE:TEXT (line numbers from
1; with --json, an object {outcome, stream, line, text, status}) and exit 0
while the job keeps running. A line printed before the wait began counts;
--from-line N skips the first N lines of each stream. --stream chooses
stdout, stderr or both (the default). If the job settles with no matching
line, its status is printed and wait exits 6. Waiting for output never
marks the job read.

` + waitManyHelp + exitCodesHelp,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: g.completeJobIDs,
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
			w, err := ready.parse(cmd, limit)
			if err != nil {
				return err
			}
			if err := checkWaitMany(args, w != nil, anyOf); err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			a, err := g.openJobs(ctx, false)
			if err != nil {
				return err
			}
			defer a.close()
			if len(args) > 1 || anyOf {
				return g.awaitManyAndReport(ctx, cmd, a, args, anyOf, limit)
			}
			id, err := a.resolve(ctx, args[0])
			if err != nil {
				return err
			}
			if w != nil {
				return g.awaitOutputAndReport(ctx, cmd, a, id, *w)
			}
			return g.awaitAndReport(ctx, cmd, a, id, limit)
		},
	}
	cmd.Flags().StringVar(&timeout, "timeout", "", "give up waiting after this long (default: wait until it settles)")
	cmd.Flags().BoolVar(&anyOf, "any", false, "return as soon as the first of the jobs settles")
	ready.register(cmd)
	return cmd
}
