package main

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// readyFlags are wait's flags for a readiness wait.
type readyFlags struct {
	pattern  string
	stream   string
	fromLine int64
}

func (f *readyFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.pattern, "until-output", "", "return once a line of output matches this regular expression (RE2)")
	cmd.Flags().StringVar(&f.stream, "stream", "both", "with --until-output: the stream to watch: stdout, stderr or both")
	cmd.Flags().Int64Var(&f.fromLine, "from-line", 0, "with --until-output: skip the first N lines of each stream")
}

// parse returns the readiness wait the flags ask for, or nil when
// --until-output was not given.
func (f *readyFlags) parse(cmd *cobra.Command, limit time.Duration) (*runner.OutputWait, error) {
	if !cmd.Flags().Changed("until-output") {
		for _, name := range []string{"stream", "from-line"} {
			if cmd.Flags().Changed(name) {
				return nil, &usageError{fmt.Errorf("--%s applies only with --until-output", name)}
			}
		}
		return nil, nil
	}
	if f.pattern == "" {
		return nil, &usageError{fmt.Errorf("--until-output: give a regular expression to wait for, e.g. --until-output 'listening on'")}
	}
	re, err := regexp.Compile(f.pattern)
	if err != nil {
		return nil, &usageError{fmt.Errorf("--until-output %q is not a valid regular expression (RE2 syntax): %v", f.pattern, err)}
	}
	if f.fromLine < 0 {
		return nil, &usageError{fmt.Errorf("--from-line %d is negative: give 0 to scan from the first line", f.fromLine)}
	}
	w := &runner.OutputWait{Pattern: re, FromLine: f.fromLine, MaxWait: limit}
	switch f.stream {
	case "both":
	case string(bgcmd.Stdout), string(bgcmd.Stderr):
		w.Streams = []bgcmd.Stream{bgcmd.Stream(f.stream)}
	default:
		return nil, &usageError{fmt.Errorf("--stream %q: use stdout, stderr or both", f.stream)}
	}
	return w, nil
}

// awaitOutputAndReport runs a readiness wait and prints its result: the
// match (exit 0), or the status of a job that settled without one (exit
// 6) or is still running when the wait elapsed (exit 5).
func (g *globals) awaitOutputAndReport(ctx context.Context, cmd *cobra.Command, a *app, id string, w runner.OutputWait) error {
	m, err := a.runner.AwaitOutput(ctx, id, w)
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(id)
		}
		return jobErr(id, err)
	}
	out := cmd.OutOrStdout()
	switch {
	case g.json:
		err = writeJSON(out, m)
	case m.Outcome == runner.OutcomeMatched:
		_, err = fmt.Fprintf(out, "%s:%d:%s\n", m.Stream, m.Line, oneLine(m.Text)) // the job's bytes in bgcmd's line
	default:
		err = writeStatus(out, styleFor(out), m.Status, time.Now())
	}
	if err != nil {
		return err
	}
	switch m.Outcome {
	case runner.OutcomeSettled:
		return &exitError{code: exitNoMatch,
			msg: fmt.Sprintf("job %s settled as %s with no line matching %q", id, m.Status.State, w.Pattern)}
	case runner.OutcomeElapsed:
		return &exitError{code: exitStillRunning,
			msg: fmt.Sprintf("no line of job %s matched %q within %s (the wait elapsed; the job keeps running)", id, w.Pattern, fmtDuration(w.MaxWait))}
	}
	return nil
}
