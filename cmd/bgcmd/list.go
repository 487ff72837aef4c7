package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// listItem is one JSON line of `list --json`: the job with the contract's
// field names, its duration, and whether it is settled but unread.
type listItem struct {
	*bgcmd.Job
	DurationMS int64 `json:"duration_ms"`
	Unread     bool  `json:"unread"`
	// QueuePosition is a queued job's place in its group's queue.
	QueuePosition int `json:"queue_position,omitempty"`
}

// listCursor is the last line of a `list --json` page when more jobs match.
type listCursor struct {
	NextBefore string `json:"next_before"`
}

func newListCmd(g *globals) *cobra.Command {
	var (
		states      []string
		allSessions bool
		since       string
		unread      bool
		limit       int
		before      string
		host        string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List jobs, newest first (JSON Lines with --json)",
		Long: `List jobs, newest first, one page at a time: the current session's (--session,
else $BGCMD_SESSION, else "default", as for every command), or every
session's with --all-sessions. Filters combine: --state (repeat or
comma-separate), --since (an RFC 3339 time or a duration ago, e.g. 2h) and
--unread (settled jobs nobody has read, marked * in the table) and --host
(one host's jobs, by its host id or its hostname, when several hosts share
the store; a HOST column appears when the page holds another host's job).

Pages are keyset pages: the next page starts --before the last id shown
(printed on stderr when there is more). With --json each job is one line
of JSON with the contract's field names plus duration_ms and unread, and
when more jobs match, one last line {"next_before": ID} (it has no "id"):
pass ID as --before to get the next page.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := jobstore.ListParams{Session: g.sessionName(), Unread: unread, Limit: limit, Before: before, Host: host}
			if allSessions {
				if g.session != "" {
					return &usageError{errors.New("--all-sessions and --session: choose one")}
				}
				p.Session = ""
			}
			for _, s := range states {
				for _, part := range strings.Split(s, ",") {
					st := bgcmd.State(strings.TrimSpace(part))
					if !st.Valid() {
						return &usageError{fmt.Errorf("--state %q: want one of %s", st, allStates())}
					}
					p.States = append(p.States, st)
				}
			}
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return &usageError{err}
				}
				p.Since = t
			}
			if limit < 1 || limit > jobstore.MaxListLimit {
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
			now := time.Now()
			pos, err := st.QueuePositions(cmd.Context())
			if err != nil {
				return err
			}
			if g.json {
				for _, j := range res.Jobs {
					item := listItem{Job: &j.Job, DurationMS: j.Duration(now).Milliseconds(),
						Unread: j.State.Settled() && j.SeenAt == nil, QueuePosition: pos[j.ID]}
					if err := writeJSON(out, item); err != nil {
						return err
					}
				}
				if res.NextBefore != "" {
					return writeJSON(out, listCursor{NextBefore: res.NextBefore})
				}
				return nil
			}
			if err := listTable(res.Jobs, pos, now, st.HostID()).write(out, styleFor(out), termWidth(out)); err != nil {
				return err
			}
			if res.NextBefore != "" {
				more := "more: bgcmd list --before " + res.NextBefore
				if allSessions {
					more += " --all-sessions"
				}
				fmt.Fprintln(os.Stderr, more)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&states, "state", nil, "keep jobs in these states (repeat or comma-separate)")
	f.BoolVar(&allSessions, "all-sessions", false, "list every session's jobs, not only the current session's")
	f.StringVar(&since, "since", "", "keep jobs created since a time (RFC 3339) or a duration ago (e.g. 2h)")
	f.BoolVar(&unread, "unread", false, "keep settled jobs not yet read")
	f.IntVar(&limit, "limit", 50, fmt.Sprintf("page size (1..%d)", jobstore.MaxListLimit))
	f.StringVar(&before, "before", "", "keyset cursor: list jobs older than this id")
	f.StringVar(&host, "host", "", "keep one host's jobs: its host id or its hostname")
	return cmd
}

// jobCommand is how a job's command is shown to people: a git tool call's
// display label ("git log --max-count 5"), else its argv; on one line,
// escaped either way.
func jobCommand(j bgcmd.Job) string {
	if d := j.Labels[bgcmd.LabelDisplay]; d != "" && j.Labels[bgcmd.LabelKind] == "git" {
		return oneLine(d)
	}
	return commandLine(j.Argv)
}

// listTable lays the jobs out for people. A HOST column appears when a job
// of another host than self (a host id) is listed.
func listTable(jobs []*jobstore.Record, pos map[string]int, now time.Time, self string) *table {
	hosts := hostLabels(jobs, self)
	t := &table{header: []string{"ID", "SESSION", "STATE", "DURATION", "CREATED", "COMMAND"}}
	if hosts != nil {
		t.header = []string{"ID", "SESSION", "HOST", "STATE", "DURATION", "CREATED", "COMMAND"}
	}
	for _, j := range jobs {
		state := stateText(j.State, j.ExitCode, j.Signal)
		if j.State.Settled() && j.SeenAt == nil {
			state.text += " *"
		}
		if p := pos[j.ID]; p > 0 {
			state.text += fmt.Sprintf(" #%d", p)
			if j.Group != "" {
				state.text += " in " + j.Group
			}
		}
		dur := "-"
		if j.StartedAt != nil {
			dur = fmtDuration(j.Duration(now))
		}
		cells := []cell{{text: j.ID}, {text: j.Session}}
		if hosts != nil {
			cells = append(cells, cell{text: hosts[j.ID]})
		}
		cells = append(cells, state, cell{text: dur}, cell{text: fmtAgo(j.CreatedAt, now)}, cell{text: jobCommand(j.Job)})
		t.add(cells...)
	}
	return t
}

// hostLabels names each job's host for the HOST column, or returns nil
// when every job is self's. A hostname that two host ids share in the
// page gets the first 8 characters of the id after it.
func hostLabels(jobs []*jobstore.Record, self string) map[string]string {
	ids := map[string]map[string]bool{}
	other := false
	for _, j := range jobs {
		if ids[j.Host] == nil {
			ids[j.Host] = map[string]bool{}
		}
		ids[j.Host][j.HostID] = true
		other = other || j.HostID != self
	}
	if !other {
		return nil
	}
	out := make(map[string]string, len(jobs))
	for _, j := range jobs {
		label := j.Host
		if len(ids[j.Host]) > 1 && len(j.HostID) >= 8 {
			label += "#" + j.HostID[:8]
		}
		if j.HostID == self {
			label += " (here)"
		}
		out[j.ID] = label
	}
	return out
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

// allStates names every state.
func allStates() string {
	names := make([]string, len(bgcmd.States()))
	for i, s := range bgcmd.States() {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
