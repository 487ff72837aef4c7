package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

func newEventsCmd(g *globals) *cobra.Command {
	var follow, settled bool
	var session string
	var after int64
	var jobs []string
	cmd := &cobra.Command{
		Use:   "events [--follow] [--session S] [--after SEQ] [--settled] [--job ID]... [--json]",
		Short: "Print job transitions, and with --follow keep printing them as they happen",
		Long: `Print the job transitions kept in the store, oldest first, one per line:
its seq, time, job id, from and to state, and the exit code once settled.
With --json each is a JSON object (JSON Lines): seq, job_id, session, from,
to, time, exit_code (and signal when one ended the job).

--follow keeps printing transitions as any process commits them (CLI,
MCP servers, detached supervisors, reconcile); it waits on the store, not by
polling, and stops on SIGINT or SIGTERM. seq orders every event of the store
and is never reused: remember the last seq you handled and pass it as
--after to resume without gaps or repeats. --after -1 starts from now.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			a, err := g.openJobs(ctx, true)
			if err != nil {
				return err
			}
			defer a.close()
			ids := make([]string, 0, len(jobs))
			for _, ref := range jobs {
				id, err := a.resolve(ctx, ref)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			out := cmd.OutOrStdout()
			if follow {
				ch, err := a.runner.Events(ctx, runner.EventFilter{Session: session, JobIDs: ids, After: after, Settled: settled})
				if err != nil {
					return err
				}
				for e := range ch {
					if err := g.writeEvent(out, e); err != nil {
						return err
					}
				}
				return nil
			}
			return g.printEvents(ctx, out, a, jobstore.EventsParams{Session: session, JobIDs: ids, After: after, Settled: settled})
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&follow, "follow", "f", false, "keep printing transitions as they happen")
	f.StringVar(&session, "session", "", "keep one session's transitions (default: all sessions)")
	f.Int64Var(&after, "after", 0, "print only transitions with a larger seq (-1: from now)")
	f.BoolVar(&settled, "settled", false, "keep only terminal transitions (a job settling)")
	f.StringArrayVar(&jobs, "job", nil, "keep this job's transitions (repeatable)")
	return cmd
}

// printEvents prints every stored event after p.After, page by page.
func (g *globals) printEvents(ctx context.Context, out io.Writer, a *app, p jobstore.EventsParams) error {
	if p.After < 0 {
		return nil // from now, without --follow: nothing
	}
	p.Limit = jobstore.MaxEventsLimit
	for {
		evs, next, err := a.store.EventsPage(ctx, p)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if err := g.writeEvent(out, bgcmd.Event{Seq: e.Seq, JobID: e.JobID, Session: e.Session,
				From: e.From, To: e.To, Time: e.At, ExitCode: e.ExitCode, Signal: e.Signal}); err != nil {
				return err
			}
		}
		if len(evs) < p.Limit {
			return nil
		}
		p.After = next
	}
}

// writeEvent prints one event: a JSON line, or a text line.
func (g *globals) writeEvent(out io.Writer, e bgcmd.Event) error {
	if g.json {
		return writeJSON(out, e)
	}
	from := string(e.From)
	if from == "" {
		from = "-"
	}
	tail := ""
	switch {
	case e.ExitCode != nil:
		tail = fmt.Sprintf("  exit %d", *e.ExitCode)
	case e.Signal != "":
		tail = "  " + e.Signal
	}
	_, err := fmt.Fprintf(out, "%d  %s  %s  %s  %s -> %s%s\n", e.Seq, e.Time.Format("2006-01-02T15:04:05.000Z07:00"),
		e.JobID, e.Session, from, e.To, tail)
	return err
}
