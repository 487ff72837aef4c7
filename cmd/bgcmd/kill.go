package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

func newKillCmd(g *globals) *cobra.Command {
	var signal string
	var wait bool
	cmd := &cobra.Command{
		Use:   "kill ID [--signal NAME]",
		Short: "Signal a job's whole process group; it settles as killed",
		Long: `Ask the job's supervisor to send the signal (default SIGTERM) to the job's
whole process group, escalating to SIGKILL after the policy's kill_grace.
The job settles as killed and its output is kept. kill waits for the
settle (up to the grace period plus a margin) and prints the status.
A job that runs on another host sharing the store cannot be signalled from
here: the request is recorded in the store, that host's supervisor stops
the job (within a second), and kill returns at once saying so; --wait
waits for the settle.
Killing a job that has already settled changes nothing and exits 0.`,
		Example: `  bgcmd kill 0190c3a2-…
  bgcmd kill --signal INT 0190c3a2-…`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeJobIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			sig, name, err := runner.ParseSignal(signal)
			if err != nil {
				return &usageError{fmt.Errorf("--signal: %w", err)}
			}
			a, err := g.openJobs(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer a.close()
			id, err := a.resolve(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			before, err := a.runner.Status(cmd.Context(), id)
			if err != nil {
				return jobErr(id, err)
			}
			s := before
			remote := before.HostID != "" && before.HostID != a.runner.HostID()
			if !before.Settled() {
				if remote {
					s, err = a.runner.RequestKill(cmd.Context(), id, sig)
				} else {
					s, err = a.runner.Kill(cmd.Context(), id, sig)
				}
				if err != nil {
					return jobErr(id, err)
				}
				if wait && !s.Settled() {
					ctx, stop := interruptible(cmd.Context())
					s, err = a.runner.Await(ctx, id, forever)
					stop()
					if errors.Is(err, context.Canceled) && cmd.Context().Err() == nil {
						return interrupted(id)
					}
					if err != nil {
						return jobErr(id, err)
					}
				}
				if s, err = a.readSettled(cmd.Context(), s); err != nil {
					return jobErr(id, err)
				}
			}
			out := cmd.OutOrStdout()
			if g.json {
				return writeJSON(out, s)
			}
			sty := styleFor(out)
			state := stateText(s.State, s.ExitCode, s.Signal)
			switch {
			case before.Settled():
				_, err = fmt.Fprintf(out, "%s had already settled: %s\n", id, sty.paint(state.sgr, state.text))
			case remote && !s.Settled():
				_, err = fmt.Fprintf(out, "%s: kill requested (%s); job runs on host %s (%s), its supervisor stops it (bgcmd wait %s)\n",
					id, name, s.Host, s.HostID, id)
			case s.Settled():
				_, err = fmt.Fprintf(out, "%s %s (%s)\n", id, sty.paint(state.sgr, state.text), killHow(s, name))
			default:
				_, err = fmt.Fprintf(out, "%s: %s sent; still running (SIGKILL follows after the grace period)\n", id, name)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&signal, "signal", "SIGTERM", "signal name or number (TERM, SIGINT, KILL, 9, …)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the job has settled (however long the grace period or the other host takes)")
	return cmd
}

// killHow says what ended a job bgcmd kill signalled: the signal sent, and
// the one the process died of when that was another (SIGKILL after the
// grace period), or the exit code when it exited on its own.
func killHow(s *bgcmd.Status, sent string) string {
	switch {
	case s.Signal != "" && s.Signal != sent:
		return fmt.Sprintf("sent %s; it ended on %s after the grace period", sent, s.Signal)
	case s.Signal != "":
		return "ended on " + sent
	case s.ExitCode != nil:
		return fmt.Sprintf("sent %s; it exited with code %d", sent, *s.ExitCode)
	}
	return "sent " + sent
}
