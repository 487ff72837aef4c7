package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

func newVerifyCmd(g *globals) *cobra.Command {
	var chain, head bool
	var since, bundle string
	cmd := &cobra.Command{
		Use:   "verify ID... | verify --chain [--head | --since HASH] | verify --bundle FILE",
		Short: "Re-hash banked output, the store's hash chain, or an evidence bundle",
		Long: `verify ID... checks that each banked output stream of the given jobs is
still there and still hashes to the sha256 recorded when its job settled. A
corrupted or missing artifact is reported, never passed off as good. With
--json, one object per stream (JSON Lines).

verify --chain recomputes the store's hash chain (every job event and refusal,
in the order they were committed; see docs/schema.md) from its first row, then
re-hashes every banked file against the hash the chain committed to. It stops
at the first row that does not match and names it: content_mismatch (a field
of the row, its job's recorded start or outcome, or an artifact hash was
edited), broken_link, missing_seq (a row deleted), duplicate_seq,
unchained_row (inserted by something other than bgcmd), head_mismatch, or
artifact_mismatch (a banked file changed or is gone).

verify --chain --head prints the chain's head (seq and hash): copy it
somewhere the home's writers cannot reach. verify --chain --since HASH later
verifies from that row on, and fails (checkpoint_not_found) if the history it
named was rewritten.

verify --bundle FILE checks an evidence bundle written by bgcmd export,
offline and without a home, and prints what it proves.

Exits 0 when everything checks out, 1 when anything does not, 4 for an
unknown job.`,
		ValidArgsFunction: g.completeJobIDs,
		RunE: func(cmd *cobra.Command, ids []string) error {
			switch {
			case bundle != "":
				if chain || head || since != "" || len(ids) > 0 {
					return &usageError{errors.New("verify --bundle takes only the bundle file")}
				}
				return verifyBundle(cmd.OutOrStdout(), g.json, bundle)
			case chain:
				if len(ids) > 0 || (head && since != "") {
					return &usageError{errors.New("verify --chain takes no job ids, and --head or --since, not both")}
				}
				if since != "" && !bgcmd.ValidSHA256(since) { // a chain hash as --head prints it
					return &usageError{fmt.Errorf("--since %q is not a recorded head hash: give the 64 hex digits bgcmd verify --chain --head printed", since)}
				}
				return verifyChain(cmd, g, head, since)
			case head || since != "":
				return &usageError{errors.New("--head and --since go with --chain")}
			case len(ids) == 0:
				return &usageError{errors.New("verify needs job ids, --chain or --bundle FILE")}
			}
			return verifyJobs(cmd, g, ids)
		},
	}
	cmd.Flags().BoolVar(&chain, "chain", false, "recompute the store's hash chain and re-hash every banked file")
	cmd.Flags().BoolVar(&head, "head", false, "with --chain: print the chain's head (seq and hash) to record as a checkpoint")
	cmd.Flags().StringVar(&since, "since", "", "with --chain: verify from the row carrying this recorded head hash")
	cmd.Flags().StringVar(&bundle, "bundle", "", "check an evidence bundle written by bgcmd export (no home needed)")
	return cmd
}

// verifyJobs re-hashes the banked output of the given jobs.
func verifyJobs(cmd *cobra.Command, g *globals, ids []string) error {
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
}

// verifyChain walks the store's chain, or prints its head.
func verifyChain(cmd *cobra.Command, g *globals, head bool, since string) error {
	a, err := g.openJobs(cmd.Context(), true)
	if err != nil {
		return err
	}
	defer a.close()
	out := cmd.OutOrStdout()
	if head {
		h, err := a.store.ChainHead(cmd.Context())
		if err != nil {
			return err
		}
		if g.json {
			return writeJSON(out, h)
		}
		_, err = fmt.Fprintf(out, "%d %s\n", h.Seq, h.Hash)
		return err
	}
	c, err := a.runner.VerifyChain(cmd.Context(), since)
	if err != nil {
		return err
	}
	if g.json {
		if err := writeJSON(out, c); err != nil {
			return err
		}
	} else if c.Problem == nil {
		from := "the first row"
		if c.From.Seq > 0 {
			from = fmt.Sprintf("checkpoint seq %d", c.From.Seq)
		}
		fmt.Fprintf(out, "chain ok: %d rows (%d events, %d refusals, %d pruned) from %s to head seq %d %s; %d banked files re-hashed\n",
			c.Rows, c.Events, c.Refusals, c.Pruned, from, c.Head.Seq, c.Head.Hash, c.Files)
	}
	if c.Problem != nil {
		return &exitError{code: exitRuntime, msg: "chain does not verify: " + c.Problem.Error()}
	}
	return nil
}

// verifyBundle checks an evidence bundle offline and prints a summary.
func verifyBundle(out io.Writer, asJSON bool, path string) error {
	rep, err := runner.VerifyBundle(path)
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(out, rep); err != nil {
			return err
		}
	} else {
		writeBundleSummary(out, rep)
	}
	if !rep.OK() {
		return &exitError{code: exitRuntime, msg: fmt.Sprintf("bundle %s does not verify: %d problem(s), the first: %s",
			oneLine(path), len(rep.Problems), oneLine(rep.Problems[0]))}
	}
	return nil
}

// writeBundleSummary prints the report; every name and value the bundle
// chose goes through oneLine, so none moves the cursor over the verdict.
func writeBundleSummary(out io.Writer, rep *runner.BundleReport) {
	if rep.OK() {
		fmt.Fprintf(out, "bundle ok: %d job(s), %d event(s), %d file(s) (%s); chain head at export: seq %d %s\n",
			len(rep.Jobs), rep.Events, rep.Files, fmtBytes(rep.Bytes), rep.ChainHead.Seq, oneLine(rep.ChainHead.Hash))
	} else {
		fmt.Fprintf(out, "bundle FAILED: %d problem(s)\n", len(rep.Problems))
		for _, p := range rep.Problems {
			fmt.Fprintf(out, "  - %s\n", oneLine(p))
		}
	}
	for _, j := range rep.Jobs {
		last := ""
		if n := len(j.EventHashes); n > 0 {
			last = j.EventHashes[n-1]
		}
		fmt.Fprintf(out, "  job %s  %s  %d event(s), last event hash %s\n", oneLine(j.ID), oneLine(string(j.State)), len(j.EventHashes), oneLine(last))
		for _, f := range j.Files {
			fmt.Fprintf(out, "    %s  %s  %s\n", oneLine(string(f.Stream)), fmtBytes(f.Bytes), oneLine(f.SHA256))
		}
	}
	if rep.OK() {
		fmt.Fprintf(out, "proves: %s\n", rep.Proves)
	}
}
