package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd/runner"
)

func newVerifyCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "verify ID...",
		Short: "Re-hash jobs' banked output against the sha256 it was banked under",
		Long: `Check that each banked output stream of the given jobs is still there and
still hashes to the sha256 recorded when its job settled. A corrupted or
missing artifact is reported, never passed off as good. Exits 0 when every
stream checks out, 1 when any does not, 4 for an unknown job. With --json,
one object per stream (JSON Lines).`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: g.completeJobIDs,
		RunE: func(cmd *cobra.Command, ids []string) error {
			a, err := g.openJobs(cmd.Context(), true)
			if err != nil {
				return err
			}
			defer a.close()
			var checks []runner.ArtifactCheck
			for _, ref := range ids {
				id, err := a.resolve(cmd.Context(), ref)
				if err != nil {
					return err
				}
				cs, err := a.runner.Verify(cmd.Context(), id)
				if err != nil {
					return jobErr(id, err)
				}
				checks = append(checks, cs...)
			}
			out := cmd.OutOrStdout()
			bad := 0
			t := &table{header: []string{"JOB", "STREAM", "BYTES", "SHA256", "RESULT"}}
			for _, c := range checks {
				if !c.OK {
					bad++
				}
				if g.json {
					if err := writeJSON(out, c); err != nil {
						return err
					}
					continue
				}
				result := cell{"ok", sgrGreen}
				if !c.OK {
					result = cell{c.Problem, sgrRed}
				}
				t.add(cell{text: c.JobID}, cell{text: string(c.Stream)}, cell{text: fmtBytes(c.Bytes)},
					cell{text: c.SHA256}, result)
			}
			if !g.json {
				if err := t.write(out, styleFor(out), termWidth(out)); err != nil {
					return err
				}
			}
			if bad > 0 {
				return &exitError{code: exitRuntime, msg: fmt.Sprintf("%d of %d banked stream(s) failed verification", bad, len(checks))}
			}
			return nil
		},
	}
}
