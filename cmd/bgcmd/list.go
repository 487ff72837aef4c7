package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/jobstore"
)

func newListCmd(g *globals) *cobra.Command {
	var (
		states  []string
		session string
		since   string
		unread  bool
		limit   int
		before  string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List jobs, newest first (JSON Lines with --json)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := jobstore.ListParams{Session: session, Unread: unread, Limit: limit, Before: before}
			for _, s := range states {
				for _, part := range strings.Split(s, ",") {
					p.States = append(p.States, bgcmd.State(strings.TrimSpace(part)))
				}
			}
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return &usageError{err}
				}
				p.Since = t
			}
			if limit < 0 || limit > jobstore.MaxListLimit {
				return &usageError{fmt.Errorf("--limit %d out of range 1..%d", limit, jobstore.MaxListLimit)}
			}
			st, err := g.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			res, err := st.List(cmd.Context(), p)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if g.json {
				enc := json.NewEncoder(out)
				for _, j := range res.Jobs {
					if err := enc.Encode(&j.Job); err != nil {
						return err
					}
				}
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSESSION\tSTATE\tEXIT\tCREATED\tCOMMAND")
			for _, j := range res.Jobs {
				exit := "-"
				if j.ExitCode != nil {
					exit = fmt.Sprint(*j.ExitCode)
				} else if j.Signal != "" {
					exit = j.Signal
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.Session, j.State, exit,
					j.CreatedAt.Local().Format("2006-01-02 15:04:05"), strings.Join(j.Argv, " "))
			}
			if res.NextBefore != "" {
				fmt.Fprintf(tw, "(more: --before %s)\n", res.NextBefore)
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&states, "state", nil, "keep jobs in these states (repeat or comma-separate)")
	f.StringVar(&session, "session", "", "keep one session's jobs (default: all sessions)")
	f.StringVar(&since, "since", "", "keep jobs created since a time (RFC 3339) or a duration ago (e.g. 2h)")
	f.BoolVar(&unread, "unread", false, "keep settled jobs not yet read")
	f.IntVar(&limit, "limit", 50, "page size (1..1000)")
	f.StringVar(&before, "before", "", "keyset cursor: list jobs older than this id")
	return cmd
}

// parseSince accepts an RFC 3339 time or a duration meaning "that long ago".
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("--since %q: want an RFC 3339 time or a positive duration like 2h", s)
	}
	return now.Add(-d), nil
}
