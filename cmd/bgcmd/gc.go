package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd/runner"
)

func newGCCmd(g *globals) *cobra.Command {
	var (
		minAge, exportsAge string
		dryRun             bool
	)
	cmd := &cobra.Command{
		Use:   "gc [--min-age DUR] [--exports-older-than DUR] [--dry-run]",
		Short: "Remove stray output files, leftover job directories, stale wake sockets, temporary files and old exports",
		Long: `Remove what the database no longer accounts for, and report it: files under
<home>/artifacts that no artifact record references (left by a crash during
prune, or by an interrupted bank), directories under <home>/jobs of jobs
that have settled or that the database does not know, and the wake sockets
(in the wake folder beside the database) of those jobs and of this host's
ended processes, left by a supervisor or a host that was killed, and the
temporary files in the home and in <home>/exports of a write or an export
that a crash interrupted. Running jobs and referenced files are never
touched, and neither is anything changed less than --min-age ago (default
15m): a supervisor may be banking it right now. Jobs whose supervisor died
are reconciled first.

The evidence bundles the agent tool command_export writes under
<home>/exports stay until you say: --exports-older-than DUR removes those
written more than DUR ago. Nothing else there is touched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			age, err := parseDuration("--min-age", minAge)
			if err != nil {
				return err
			}
			var exportsOlder time.Duration
			if exportsAge != "" {
				if exportsOlder, err = parseDuration("--exports-older-than", exportsAge); err != nil {
					return err
				}
				if exportsOlder <= 0 {
					return &usageError{fmt.Errorf("--exports-older-than %q: give a positive age such as 720h, or omit the flag to keep every export", exportsAge)}
				}
			}
			a, err := g.openJobs(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer a.close()
			rep, err := a.runner.GC(cmd.Context(), runner.GCOptions{MinAge: age, DryRun: dryRun, ExportsOlderThan: exportsOlder})
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
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			for _, it := range slices.Concat(rep.StrayFiles, rep.JobDirs, rep.WakeSockets, rep.TempFiles, rep.Exports) {
				if _, werr := fmt.Fprintf(out, "%s %s (%s): %s\n", verb, it.Path, fmtBytes(it.Bytes), it.Reason); werr != nil {
					return werr
				}
			}
			counts := []string{fmt.Sprintf("%d stray file(s)", len(rep.StrayFiles)),
				fmt.Sprintf("%d leftover job dir(s)", len(rep.JobDirs))}
			// These two are named only when there are any.
			if n := len(rep.WakeSockets); n > 0 {
				counts = append(counts, fmt.Sprintf("%d stale wake socket(s)", n))
			}
			if n := len(rep.TempFiles); n > 0 {
				counts = append(counts, fmt.Sprintf("%d temporary file(s)", n))
			}
			if n := len(rep.Exports); n > 0 {
				counts = append(counts, fmt.Sprintf("%d export file(s)", n))
			}
			last := len(counts) - 1
			msg := fmt.Sprintf("%s %s and %s, %s in all", verb, strings.Join(counts[:last], ", "), counts[last],
				fmtBytes(rep.FreedBytes))
			if rep.SkippedRecent > 0 {
				msg += fmt.Sprintf("; spared %d younger than %s", rep.SkippedRecent, fmtDuration(age))
			}
			if _, werr := fmt.Fprintln(out, msg); werr != nil {
				return werr
			}
			return err
		},
	}
	cmd.Flags().StringVar(&minAge, "min-age", runner.DefaultGCMinAge.String(), "spare anything changed more recently than this")
	cmd.Flags().StringVar(&exportsAge, "exports-older-than", "", "also remove the bundles command_export wrote more than this long ago")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report what would be removed; remove nothing")
	return cmd
}
