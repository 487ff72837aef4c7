package runner

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
)

// OutputWait says what AwaitOutput waits for.
type OutputWait struct {
	// Pattern is matched (RE2) against each complete line of output, the
	// line without its '\n', as the output reader's grep does. Required.
	Pattern *regexp.Regexp
	// Streams are the streams to watch; nil means both.
	Streams []bgcmd.Stream
	// FromLine skips the first FromLine lines of each stream (0: from the
	// start, so a line printed before the wait began still counts).
	FromLine int64
	// MaxWait bounds the wait, never the command.
	MaxWait time.Duration
}

// WaitOutcome says how an AwaitOutput ended.
type WaitOutcome string

// The outcomes of AwaitOutput.
const (
	// OutcomeMatched: a line matched; the job may still be running.
	OutcomeMatched WaitOutcome = "matched"
	// OutcomeSettled: the job settled and no line of its complete output
	// matched.
	OutcomeSettled WaitOutcome = "settled"
	// OutcomeElapsed: MaxWait elapsed first; the job keeps running.
	OutcomeElapsed WaitOutcome = "elapsed"
)

// OutputMatch is the result of AwaitOutput: the first matching line (when
// Outcome is matched) and the job's status at that moment.
type OutputMatch struct {
	// Outcome says why the wait ended.
	Outcome WaitOutcome `json:"outcome"`
	// Stream, Line (1-based, as grep -n counts) and Text name the match;
	// empty unless Outcome is matched.
	Stream bgcmd.Stream `json:"stream,omitempty"`
	Line   int64        `json:"line,omitempty"`
	Text   string       `json:"text,omitempty"`
	// Status is the job's status when the wait ended. Waiting for output
	// never marks a job read.
	Status *bgcmd.Status `json:"status"`
}

// AwaitOutput waits until a line of the job's output matches w.Pattern, the
// job settles without such a line, or w.MaxWait elapses, whichever is
// first. It scans each stream once, from w.FromLine on, as bytes arrive: it
// wakes on writes to the job's logs (a watch on its directory, not a poll
// of the database) and reads only the lines it has not seen, through the
// log's index, so a match at the end of a huge output costs one pass and
// no memory beyond a line. A live log's unfinished last line is looked at
// once it ends or the job settles. Unknown ids wrap bgcmd.ErrNotFound.
func (r *Runner) AwaitOutput(ctx context.Context, id string, w OutputWait) (*OutputMatch, error) {
	if w.Pattern == nil {
		return nil, errors.New("await output: no pattern: give a regular expression to wait for")
	}
	if w.FromLine < 0 {
		return nil, fmt.Errorf("await output: from line %d is negative: give 0 to scan from the start", w.FromLine)
	}
	streams := w.Streams
	if len(streams) == 0 {
		streams = []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr}
	}
	for _, st := range streams {
		if !st.Valid() {
			return nil, fmt.Errorf("await output: unknown stream %q (stdout or stderr)", st)
		}
	}
	streams = slices.Compact(slices.Clone(streams))
	next := make(map[bgcmd.Stream]int64, len(streams))
	for _, st := range streams {
		next[st] = w.FromLine
	}
	timer := time.NewTimer(w.MaxWait)
	defer timer.Stop()
	var watch *dirWatch
	defer func() {
		if watch != nil {
			watch.Close()
		}
	}()
	for {
		rec, err := r.store.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		settled := rec.State.Settled()
		if !settled && watch == nil {
			// Watch before reading, so a write that lands after the read
			// still wakes the wait.
			watch, _ = watchDirWrites(r.jobDir(id))
		}
		capped := false
		for _, st := range streams {
			m, more, err := r.scanFrom(ctx, id, st, w.Pattern, next)
			if err != nil {
				return nil, err
			}
			if m != nil {
				return r.waitResult(ctx, id, m)
			}
			capped = capped || more
		}
		if capped {
			// A scan ended on its budget (artifacts.GrepBudget) with lines
			// left to scan: go on at once, unless the wait is over.
			select {
			case <-timer.C:
				return r.waitResult(ctx, id, &OutputMatch{Outcome: OutcomeElapsed})
			case <-ctx.Done():
				return nil, ctx.Err()
			default:
				continue
			}
		}
		if settled {
			// The state was read before the scan, so the scan read the
			// banked, complete output.
			return r.waitResult(ctx, id, &OutputMatch{Outcome: OutcomeSettled})
		}
		var wake <-chan struct{}
		if watch != nil {
			wake = watch.C
		}
		if sup := r.liveSupervisor(id); sup == nil && !r.supervisorAlive(rec) {
			// Nobody will settle it: do it now, as Await does.
			if _, err := r.reconcileJob(ctx, rec); err != nil {
				return nil, err
			}
			continue
		} else if sup != nil {
			select {
			case <-sup.done:
				continue
			default:
			}
		}
		select {
		case _, ok := <-wake:
			if !ok {
				watch.Close()
				watch = nil
			}
		case <-time.After(time.Second): // a safety net under the watch
		case <-timer.C:
			return r.waitResult(ctx, id, &OutputMatch{Outcome: OutcomeElapsed})
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// scanFrom greps one stream from the line next[st] to the last complete
// line and advances next[st] past what it read. It returns the first
// match, or nil, and whether the scan ended on its budget with lines left
// to scan.
func (r *Runner) scanFrom(ctx context.Context, id string, st bgcmd.Stream, re *regexp.Regexp, next map[bgcmd.Stream]int64) (*OutputMatch, bool, error) {
	res, err := r.ReadOutput(ctx, id, st, artifacts.Page{Unit: artifacts.UnitLines,
		Offset: next[st], Grep: re.String(), MaxMatches: 1})
	if err != nil {
		return nil, false, err
	}
	if len(res.Matches) > 0 {
		m := res.Matches[0]
		next[st] = m.Line
		return &OutputMatch{Outcome: OutcomeMatched, Stream: st, Line: m.Line, Text: m.Text}, false, nil
	}
	next[st] = res.NextOffset
	return nil, res.ScanCapped, nil
}

// waitResult fills in the job's status without marking it read.
func (r *Runner) waitResult(ctx context.Context, id string, m *OutputMatch) (*OutputMatch, error) {
	st, err := r.Status(context.WithoutCancel(ctx), id)
	if err != nil {
		return nil, err
	}
	m.Status = st
	return m, nil
}
