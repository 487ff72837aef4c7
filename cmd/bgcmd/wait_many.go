package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
)

// waitManyHelp documents waiting for several jobs.
const waitManyHelp = `With several ids, wait for all of them, print each status as it settles
(in the order given) and exit with the first non-zero exit code among them,
in that order (0 when all exited 0). With --any, return as soon as the first
of them settles (one that had settled already counts): print its status and
exit with its exit code. The ids of one wait must be distinct; the wake-up
comes from the store, so it is the same for jobs started or settled by any
process.

`

// checkWaitMany rejects the combinations wait does not take.
func checkWaitMany(args []string, untilOutput, anyOf bool) error {
	if untilOutput && (len(args) > 1 || anyOf) {
		return &usageError{errors.New("--until-output waits for one job: give exactly one id, without --any")}
	}
	return nil
}

// awaitManyAndReport waits for all of refs (or, with anyOf, the first to
// settle) and reports as the single-job wait does.
func (g *globals) awaitManyAndReport(ctx context.Context, cmd *cobra.Command, a *app, refs []string, anyOf bool, limit time.Duration) error {
	ids := make([]string, 0, len(refs))
	seen := map[string]bool{}
	for _, ref := range refs {
		id, err := a.resolve(ctx, ref)
		if err != nil {
			return err
		}
		if seen[id] {
			return &usageError{fmt.Errorf("job %s is given twice: give each id once", id)}
		}
		seen[id] = true
		ids = append(ids, id)
	}
	out := cmd.OutOrStdout()
	if anyOf {
		s, err := a.runner.AwaitAny(ctx, ids, limit)
		if err == nil {
			s, err = a.readSettled(ctx, s)
		}
		if err != nil {
			if ctx.Err() != nil {
				return interrupted(ids[0])
			}
			return jobErr(ids[0], err)
		}
		if err := g.printWaited(out, s, false); err != nil {
			return err
		}
		if !s.Settled() {
			return &exitError{code: exitStillRunning,
				msg: fmt.Sprintf("none of the %d jobs settled within %s (the wait elapsed, not the commands)", len(ids), fmtDuration(limit))}
		}
		return settledExit(s)
	}
	deadline := time.Now().Add(limit)
	var first error
	for i, id := range ids {
		s, err := a.runner.Await(ctx, id, max(time.Until(deadline), 0))
		if err == nil {
			s, err = a.readSettled(ctx, s)
		}
		if err != nil {
			if ctx.Err() != nil {
				return interrupted(id)
			}
			return jobErr(id, err)
		}
		if err := g.printWaited(out, s, i > 0); err != nil {
			return err
		}
		if !s.Settled() {
			return &exitError{code: exitStillRunning,
				msg: fmt.Sprintf("job %s is still running after %s (the wait elapsed, not the command)", id, fmtDuration(limit))}
		}
		if first == nil {
			first = settledExit(s)
		}
	}
	return first
}

// printWaited prints one status of a multi-job wait: a JSON line with
// --json, else the status block (after a blank line when not the first).
func (g *globals) printWaited(out io.Writer, s *bgcmd.Status, sep bool) error {
	if g.json {
		return writeJSON(out, s)
	}
	if sep {
		if _, err := fmt.Fprintln(out); err != nil {
			return err
		}
	}
	return writeStatus(out, styleFor(out), s, time.Now())
}
