package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// pruneJSON is `prune --json`: the report plus what was asked.
type pruneJSON struct {
	DryRun bool `json:"dry_run"`
	*runner.PruneReport
	Vacuumed bool `json:"vacuumed"`
}

func newPruneCmd(g *globals) *cobra.Command {
	var (
		olderThan, session    string
		states                []string
		keepLast              int
		includeUnread, dryRun bool
		vacuum                bool
	)
	cmd := &cobra.Command{
		Use:   "prune [--older-than DUR] [--state S] [--session S] [--keep-last N] [--include-unread] [--dry-run] [--vacuum]",
		Short: "Delete settled jobs, their history and output files, and old refusals",
		Long: `Delete the settled jobs that match every selector given, with their events,
artifact records and the output files no other job shares. Running jobs are
never touched; unread jobs (settled, never looked at) only with
--include-unread. At least one selector is required:

  --older-than DUR   settled more than DUR ago (--older-than 0s: any age)
  --state S          in these settled states (repeat or comma-separate)
  --session S        of this session
  --keep-last N      all but the N newest settled jobs of each session

--older-than also deletes the refusals recorded before then (of --session
when given), unless --state is given: a state selects jobs only.

--dry-run lists what would go and the bytes it would free. Rows are deleted
first, in transactions, then the files: a crash in between leaves stray
files for bgcmd gc, never a record pointing at a missing file. --vacuum
compacts the database afterwards.`,
		Example: `  bgcmd prune --older-than 168h --dry-run
  bgcmd prune --keep-last 100
  bgcmd prune --session ci --state timeout,output_limit --include-unread`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := jobstore.PruneParams{Session: session, KeepLast: keepLast, IncludeUnread: includeUnread, DryRun: dryRun}
			if olderThan != "" {
				d, err := parseDuration("--older-than", olderThan)
				if err != nil {
					return err
				}
				p.FinishedBefore = time.Now().Add(-d)
			}
			for _, s := range states {
				for _, part := range strings.Split(s, ",") {
					st := bgcmd.State(strings.TrimSpace(part))
					if !st.Settled() {
						return &usageError{fmt.Errorf("--state %q: prune takes settled states (%s); running jobs are never pruned", st, settledList())}
					}
					p.States = append(p.States, st)
				}
			}
			if keepLast < 0 {
				return &usageError{fmt.Errorf("--keep-last %d: must not be negative", keepLast)}
			}
			if len(p.States) == 0 && p.Session == "" && olderThan == "" && keepLast == 0 {
				return &usageError{errors.New("prune without a selector would delete every settled job; " +
					"add --older-than DUR (e.g. --older-than 168h), --state S, --session S or --keep-last N " +
					"(--older-than 0s selects every settled job)")}
			}
			a, err := g.openJobs(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer a.close()
			rep, err := a.runner.Prune(cmd.Context(), p)
			if rep == nil {
				return err
			}
			vacuumed := false
			if err == nil && vacuum && !dryRun {
				if err = a.store.Vacuum(cmd.Context()); err == nil {
					vacuumed = true
				}
			}
			out := cmd.OutOrStdout()
			if g.json {
				return errors.Join(err, writeJSON(out, pruneJSON{DryRun: dryRun, PruneReport: rep, Vacuumed: vacuumed}))
			}
			size, _ := a.store.Size(cmd.Context())
			return errors.Join(err, writePrune(cmd, rep, dryRun, vacuumed, size))
		},
	}
	f := cmd.Flags()
	f.StringVar(&olderThan, "older-than", "", "jobs settled more than this long ago (e.g. 168h)")
	f.StringSliceVar(&states, "state", nil, "jobs in these settled states (repeat or comma-separate)")
	f.StringVar(&session, "session", "", "jobs of this session")
	f.IntVar(&keepLast, "keep-last", 0, "spare the N newest settled jobs of each session")
	f.BoolVar(&includeUnread, "include-unread", false, "also delete settled jobs nobody has read")
	f.BoolVar(&dryRun, "dry-run", false, "list what would be deleted and the bytes freed; delete nothing")
	f.BoolVar(&vacuum, "vacuum", false, "compact the database file afterwards")
	return cmd
}

// writePrune renders a prune report for people.
func writePrune(cmd *cobra.Command, rep *runner.PruneReport, dryRun, vacuumed bool, dbSize int64) error {
	out := cmd.OutOrStdout()
	sty := styleFor(out)
	if dryRun && len(rep.Jobs) > 0 {
		t := &table{header: []string{"ID", "SESSION", "STATE", "FINISHED", "OUTPUT", "COMMAND"}}
		now := time.Now()
		for _, j := range rep.Jobs {
			t.add(cell{text: j.ID}, cell{text: j.Session}, stateText(j.State, j.ExitCode, j.Signal),
				cell{text: fmtAgo(j.FinishedAt, now)}, cell{text: fmtBytes(j.Bytes)}, cell{text: commandLine(j.Argv)})
		}
		if err := t.write(out, sty, termWidth(out)); err != nil {
			return err
		}
	}
	var msg string
	if dryRun {
		msg = fmt.Sprintf("would delete %d job(s) and free %s (%d output file(s) no other job shares)",
			len(rep.Jobs), fmtBytes(rep.FreedBytes), len(rep.Unreferenced))
	} else {
		msg = fmt.Sprintf("deleted %d job(s) (%d events, %d artifact records), removed %d file(s), freed %s",
			len(rep.Jobs), rep.Events, rep.Artifacts, rep.RemovedFiles, fmtBytes(rep.FreedBytes))
	}
	if dryRun {
		msg += fmt.Sprintf("; would delete %d refusal(s)", rep.Refusals)
	} else {
		msg += fmt.Sprintf("; deleted %d refusal(s)", rep.Refusals)
	}
	if _, err := fmt.Fprintln(out, msg); err != nil {
		return err
	}
	if vacuumed {
		size := "?"
		if dbSize > 0 {
			size = fmtBytes(dbSize)
		}
		_, err := fmt.Fprintf(out, "vacuumed the database (now %s)\n", size)
		return err
	}
	return nil
}

// settledList names the settled states.
func settledList() string {
	return strings.Join(bgcmd.StateNames(bgcmd.SettledStates()), ", ")
}
