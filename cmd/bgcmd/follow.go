package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
)

// followPoll bounds each wait for the job to settle between two reads of
// its output: how late new output shows at most.
const followPoll = 250 * time.Millisecond

// followChunk is one JSON line of `follow --json` carrying output.
type followChunk struct {
	Event      string       `json:"event"` // "output"
	Stream     bgcmd.Stream `json:"stream"`
	Offset     int64        `json:"offset"`
	NextOffset int64        `json:"next_offset"`
	Text       string       `json:"text"`
}

// followEnd is the last JSON line of `follow --json`: the settled status.
type followEnd struct {
	Event string `json:"event"` // "status"
	*bgcmd.Status
}

func newFollowCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "follow ID",
		Short: "Stream a job's output until it settles, then exit with its exit code",
		Long: `Print a job's output from the start as it arrives (its stdout to stdout, its
stderr to stderr) until the job settles, then exit as the command did.
With --json, JSON Lines: {"event":"output","stream","offset","next_offset",
"text"} for each piece of output, and a last {"event":"status", ...} line
carrying the settled status. On a terminal a progress line is drawn on
stderr between pieces of output.

` + exitCodesHelp,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeJobIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			a, err := g.openJobs(ctx, false)
			if err != nil {
				return err
			}
			defer a.close()
			id, err := a.resolve(ctx, args[0])
			if err != nil {
				return err
			}
			f := &follower{a: a, id: id, json: g.json, out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr()}
			return f.run(ctx)
		},
	}
}

// follower streams one job's output.
type follower struct {
	a           *app
	id          string
	json        bool
	out, errOut io.Writer
	offsets     [2]int64
	p           *progress
}

func (f *follower) run(ctx context.Context) error {
	s, err := f.a.runner.Status(ctx, f.id)
	if err != nil {
		return jobErr(f.id, err)
	}
	f.p = startProgress(ctx, func(ctx context.Context) (*bgcmd.Status, error) { return f.a.runner.Status(ctx, f.id) })
	defer f.p.end()
	for {
		if err := f.drain(ctx, s); err != nil {
			return err
		}
		if s.Settled() {
			break
		}
		if s, err = f.a.runner.Await(ctx, f.id, followPoll); err != nil {
			if ctx.Err() != nil {
				return interrupted(f.id)
			}
			return jobErr(f.id, err)
		}
	}
	if s, err = f.a.runner.Read(ctx, f.id); err != nil {
		return jobErr(f.id, err)
	}
	f.p.end()
	if f.json {
		if err := writeJSON(f.out, followEnd{Event: "status", Status: s}); err != nil {
			return err
		}
	} else {
		// The outcome goes to stderr so that stdout stays the output alone.
		state := stateText(s.State, s.ExitCode, s.Signal)
		fmt.Fprintf(f.errOut, "bgcmd: job %s %s after %s\n", shortID(s.ID),
			styleFor(f.errOut).paint(state.sgr, state.text), fmtDuration(time.Duration(s.DurationMS)*time.Millisecond))
	}
	return settledExit(s)
}

// drain writes whatever output both streams have past the offsets seen.
func (f *follower) drain(ctx context.Context, s *bgcmd.Status) error {
	for i, st := range []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr} {
		for {
			res, err := f.a.runner.ReadOutput(ctx, f.id, st, artifacts.Page{Offset: f.offsets[i],
				Limit: artifacts.MaxPageBytes, Raw: !f.json})
			if err != nil {
				if s.State == bgcmd.StateStartFailed || s.Settled() && s.StartedAt == nil || !s.Settled() && errors.Is(err, fs.ErrNotExist) {
					break // nothing banked (it never started), or no log yet
				}
				return outputErr(ctx, f.a, f.id, st, err)
			}
			if res.NextOffset == f.offsets[i] {
				break
			}
			if err := f.p.pause(func() error { return f.write(st, res) }); err != nil {
				return err
			}
			f.offsets[i] = res.NextOffset
		}
	}
	return nil
}

// write emits one page.
func (f *follower) write(st bgcmd.Stream, res *artifacts.Result) error {
	if f.json {
		return writeJSON(f.out, followChunk{Event: "output", Stream: st, Offset: res.Offset,
			NextOffset: res.NextOffset, Text: res.Text})
	}
	w := f.out
	if st == bgcmd.Stderr {
		w = f.errOut
	}
	_, err := w.Write(res.Data)
	return err
}
