package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// readyJob starts ready-after.sh, which prints msg on stream ("out" or
// "err") once gate exists and exits once release exists; "-" skips either
// wait. It returns the job.
func (e *env) readyJob(gate, stream, msg, release string) *bgcmd.Job {
	e.t.Helper()
	return e.start([]string{"/bin/sh", fixture(e.t, "ready-after.sh"), gate, stream, msg, release}, runner.StartOptions{})
}

func touch(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, nil, 0o600))
}

func TestAwaitOutputMatchesWhileTheJobRuns(t *testing.T) {
	t.Parallel()
	for _, detached := range []bool{false, true} {
		t.Run(map[bool]string{false: "in process", true: "detached"}[detached], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, detached)
			gate, release := filepath.Join(e.root, "gate"), filepath.Join(e.root, "release")
			j := e.readyJob(gate, "out", "ready on 8080", release)
			t.Cleanup(func() { touch(t, release); e.await(j.ID) })

			type result struct {
				m   *runner.OutputMatch
				err error
			}
			done := make(chan result, 1)
			go func() {
				m, err := e.r.AwaitOutput(context.Background(), j.ID, runner.OutputWait{
					Pattern: regexp.MustCompile(`ready on (\d+)`), MaxWait: time.Minute})
				done <- result{m, err}
			}()
			touch(t, gate) // the line is printed after the wait began
			res := <-done
			require.NoError(t, res.err)
			m := res.m
			require.Equal(t, runner.OutcomeMatched, m.Outcome)
			require.Equal(t, bgcmd.Stdout, m.Stream)
			require.Equal(t, int64(2), m.Line, "line 1 is \"starting\"")
			require.Equal(t, "ready on 8080", m.Text)
			require.Equal(t, bgcmd.StateRunning, m.Status.State, "the job waits for its release: it must still run")
		})
	}
}

func TestAwaitOutputFindsALinePrintedBeforeTheWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	release := filepath.Join(e.root, "release")
	j := e.readyJob("-", "out", "listening", release)
	t.Cleanup(func() { touch(t, release); e.await(j.ID) })
	waitFor(t, "the line to be printed", func() bool { return strings.Contains(e.output(j.ID, bgcmd.Stdout), "listening\n") })

	m, err := e.r.AwaitOutput(context.Background(), j.ID, runner.OutputWait{
		Pattern: regexp.MustCompile(`^listen`), MaxWait: time.Minute})
	require.NoError(t, err)
	require.Equal(t, runner.OutcomeMatched, m.Outcome)
	require.Equal(t, int64(2), m.Line)
	require.Equal(t, bgcmd.StateRunning, m.Status.State)

	// Skipping the lines up to it, the same pattern is not found before
	// the wait elapses, and the job keeps running.
	m, err = e.r.AwaitOutput(context.Background(), j.ID, runner.OutputWait{
		Pattern: regexp.MustCompile(`^listen`), FromLine: 2, MaxWait: 50 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, runner.OutcomeElapsed, m.Outcome)
	require.Empty(t, m.Text)
	require.Equal(t, bgcmd.StateRunning, m.Status.State)
}

func TestAwaitOutputOnStderrOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	release := filepath.Join(e.root, "release")
	j := e.readyJob("-", "err", "ready (stderr)", release)
	t.Cleanup(func() { touch(t, release); e.await(j.ID) })

	m, err := e.r.AwaitOutput(context.Background(), j.ID, runner.OutputWait{
		Pattern: regexp.MustCompile(`ready`), Streams: []bgcmd.Stream{bgcmd.Stderr}, MaxWait: time.Minute})
	require.NoError(t, err)
	require.Equal(t, runner.OutcomeMatched, m.Outcome)
	require.Equal(t, bgcmd.Stderr, m.Stream)
	require.Equal(t, "ready (stderr)", m.Text)

	// Watching stdout alone, the stderr line never matches.
	m, err = e.r.AwaitOutput(context.Background(), j.ID, runner.OutputWait{
		Pattern: regexp.MustCompile(`ready`), Streams: []bgcmd.Stream{bgcmd.Stdout}, MaxWait: 50 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, runner.OutcomeElapsed, m.Outcome)
}

func TestAwaitOutputReportsAJobThatSettledWithoutAMatch(t *testing.T) {
	t.Parallel()
	for _, detached := range []bool{false, true} {
		t.Run(map[bool]string{false: "in process", true: "detached"}[detached], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, detached)
			gate := filepath.Join(e.root, "gate")
			j := e.readyJob(gate, "out", "something else", "-")
			type result struct {
				m   *runner.OutputMatch
				err error
			}
			done := make(chan result, 1)
			go func() {
				m, err := e.r.AwaitOutput(context.Background(), j.ID, runner.OutputWait{
					Pattern: regexp.MustCompile(`ready`), MaxWait: time.Minute})
				done <- result{m, err}
			}()
			touch(t, gate)
			res := <-done
			require.NoError(t, res.err)
			require.Equal(t, runner.OutcomeSettled, res.m.Outcome)
			require.Equal(t, bgcmd.StateExited, res.m.Status.State)
			require.Empty(t, res.m.Text)

			// Waiting for output never marks the job read.
			c, err := e.r.Counters(context.Background(), "")
			require.NoError(t, err)
			require.Equal(t, 1, c.Finished, "the settled job must still count as unread")
		})
	}
}

func TestAwaitOutputMatchesTheUnterminatedLastLineOnceSettled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	j := e.start([]string{"/usr/bin/env", "printf", "one\nready, no newline"}, runner.StartOptions{})
	m, err := e.r.AwaitOutput(context.Background(), j.ID, runner.OutputWait{
		Pattern: regexp.MustCompile(`^ready`), MaxWait: time.Minute})
	require.NoError(t, err)
	require.Equal(t, runner.OutcomeMatched, m.Outcome)
	require.Equal(t, int64(2), m.Line)
	require.Equal(t, "ready, no newline", m.Text)
}

func TestAwaitOutputRefusesBadRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	j := e.readyJob("-", "out", "x", "-")
	e.await(j.ID)
	_, err := e.r.AwaitOutput(context.Background(), j.ID, runner.OutputWait{})
	require.ErrorContains(t, err, "no pattern")
	_, err = e.r.AwaitOutput(context.Background(), j.ID, runner.OutputWait{Pattern: regexp.MustCompile("x"), FromLine: -1})
	require.ErrorContains(t, err, "negative")
	_, err = e.r.AwaitOutput(context.Background(), j.ID, runner.OutputWait{Pattern: regexp.MustCompile("x"), Streams: []bgcmd.Stream{"stdin"}})
	require.ErrorContains(t, err, `unknown stream "stdin"`)
	_, err = e.r.AwaitOutput(context.Background(), "0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c", runner.OutputWait{Pattern: regexp.MustCompile("x")})
	require.ErrorIs(t, err, bgcmd.ErrNotFound)
}
