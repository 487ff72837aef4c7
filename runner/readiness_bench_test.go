package runner_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/runner"
)

// readinessSamples and pollSamples are the samples one op takes of each
// way to notice a line.
const (
	readinessSamples = 40
	pollSamples      = 20
	pollInterval     = 250 * time.Millisecond
)

// BenchmarkReadinessWait measures the time from a line reaching a running
// job's stdout to the waiter knowing: runner.AwaitOutput (woken by the
// log's writes) against what an agent does without it, a loop that greps
// the new output every 250 ms, in the same run on the same job (a detached
// `cat` of a fifo the benchmark writes each line into). It reports the
// 50th and 99th percentiles of both.
func BenchmarkReadinessWait(b *testing.B) {
	e := newEnv(b, true)
	fifo := filepath.Join(e.root, "lines")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		b.Fatal(err)
	}
	e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, "/usr/bin/cat")
	j := e.start([]string{"/usr/bin/cat", fifo}, runner.StartOptions{})
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { w.Close(); e.await(j.ID) }()
	ctx := context.Background()
	var line int64
	var ready, poll []time.Duration
	b.ResetTimer()
	for range b.N {
		for range readinessSamples {
			text := fmt.Sprintf("ready %d", line)
			got := make(chan noticed, 1)
			go func() {
				m, err := e.r.AwaitOutput(ctx, j.ID, runner.OutputWait{
					Pattern: regexp.MustCompile("^" + text + "$"), FromLine: line, MaxWait: time.Minute})
				if err == nil && m.Outcome != runner.OutcomeMatched {
					err = fmt.Errorf("readiness wait ended %s", m.Outcome)
				}
				got <- noticed{time.Now(), err}
			}()
			time.Sleep(20 * time.Millisecond) // let the waiter block: it measures a wake, not a first read
			sent := time.Now()
			fmt.Fprintln(w, text)
			ready = append(ready, (<-got).since(b, sent))
			line++
		}
		for range pollSamples {
			text := fmt.Sprintf("poll %d", line)
			got := make(chan noticed, 1)
			go func(from int64) {
				tick := time.NewTicker(pollInterval)
				defer tick.Stop()
				for range tick.C {
					res, err := e.r.ReadOutput(ctx, j.ID, bgcmd.Stdout, artifacts.Page{
						Unit: artifacts.UnitLines, Offset: from, Grep: "^" + text + "$", MaxMatches: 1})
					if err != nil || len(res.Matches) > 0 {
						got <- noticed{time.Now(), err}
						return
					}
					from = res.NextOffset
				}
			}(line)
			time.Sleep(rand.N(pollInterval)) // a line lands at any phase of the loop
			sent := time.Now()
			fmt.Fprintln(w, text)
			poll = append(poll, (<-got).since(b, sent))
			line++
		}
	}
	b.StopTimer()
	b.ReportMetric(msAt(ready, 50), "ready-p50-ms")
	b.ReportMetric(msAt(ready, 99), "ready-p99-ms")
	b.ReportMetric(msAt(poll, 50), "poll250-p50-ms")
	b.ReportMetric(msAt(poll, 99), "poll250-p99-ms")
}

// noticed is when a waiter knew of a line, or why it failed.
type noticed struct {
	at  time.Time
	err error
}

func (n noticed) since(b *testing.B, sent time.Time) time.Duration {
	if n.err != nil {
		b.Fatal(n.err)
	}
	return n.at.Sub(sent)
}

// msAt returns the p-th percentile of d in milliseconds.
func msAt(d []time.Duration, p int) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	i := min(len(s)-1, len(s)*p/100)
	return float64(s[i]) / float64(time.Millisecond)
}
