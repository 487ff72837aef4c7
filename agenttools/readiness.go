package agenttools

import (
	"context"
	"regexp"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// readinessProps are command_wait's arguments for waiting on output.
var readinessProps = []prop{
	{name: "until_output", typ: "string", maxLen: 1024,
		desc: `return as soon as a line of output matches this regular expression (RE2), e.g. "listening on :\\d+"; the command keeps running`},
	{name: "stream", typ: "string", enum: []string{"stdout", "stderr", "both"},
		desc: `with until_output: the stream to watch (default "both")`},
	{name: "from_line", typ: "integer", min: 0, max: 1 << 53,
		desc: "with until_output: skip the first from_line lines of each stream (default 0: a line printed before the wait counts)"},
}

// readinessArgs are command_wait's arguments when it waits for output.
type readinessArgs struct {
	UntilOutput string `json:"until_output"`
	Stream      string `json:"stream"`
	FromLine    int64  `json:"from_line"`
}

// LineMatch is the line a readiness wait matched.
type LineMatch struct {
	Stream bgcmd.Stream `json:"stream"`
	// Line is the line's number, from 1 as grep -n counts.
	Line int64  `json:"line"`
	Text string `json:"text"`
}

// awaitOutput is command_wait with until_output: the command's status plus
// how the wait ended and the matching line, if any.
func (t *Toolset) awaitOutput(ctx context.Context, id string, maxWait time.Duration, a readinessArgs) (counted, error) {
	re, err := regexp.Compile(a.UntilOutput)
	if err != nil {
		return nil, invalid(`fix until_output: it is an RE2 regular expression, e.g. "ready|listening"`,
			"until_output %q is not a valid regular expression: %v", a.UntilOutput, err)
	}
	if a.Stream != "" && a.Stream != "both" && a.Stream != "stdout" && a.Stream != "stderr" {
		return nil, invalid(`give stream as "stdout", "stderr" or "both"`, "unknown stream %q", a.Stream)
	}
	w := runner.OutputWait{Pattern: re, FromLine: a.FromLine, MaxWait: maxWait}
	if a.Stream == "stdout" || a.Stream == "stderr" {
		w.Streams = []bgcmd.Stream{bgcmd.Stream(a.Stream)}
	}
	m, err := t.r.AwaitOutput(ctx, id, w)
	if err != nil {
		return nil, notFoundAs(err, id)
	}
	s := newStatus(m.Status)
	s.WaitOutcome = string(m.Outcome)
	switch m.Outcome {
	case runner.OutcomeMatched:
		s.Match = &LineMatch{Stream: m.Stream, Line: m.Line, Text: m.Text}
		if !s.Settled {
			s.Next = "the command printed the line and keeps running; command_wait without until_output waits for it to end, command_kill stops it"
		}
	case runner.OutcomeSettled:
		s.Next = "the command ended without printing a matching line: " + s.Next
	}
	return s, nil
}
