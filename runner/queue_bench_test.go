package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// eventAt returns when the job's transition to state was recorded.
func eventAt(b *testing.B, e *env, id string, to bgcmd.State) time.Time {
	b.Helper()
	evs, err := e.store.Events(context.Background(), id)
	if err != nil {
		b.Fatal(err)
	}
	for _, ev := range evs {
		if ev.To == to {
			return ev.At
		}
	}
	b.Fatalf("job %s never went %s", id, to)
	return time.Time{}
}

func medianMS(d []time.Duration) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

// BenchmarkQueueSlotHandoff: the time from a slot freeing (the running job
// of a group with max_running = 1 settles) to the next queued job running,
// both read from job_events. Beside it, the unqueued figure of the same
// run: a caller that awaits the first job and then starts the second, the
// way an agent chains commands without the queue.
func BenchmarkQueueSlotHandoff(b *testing.B) {
	e := benchEnv(b, false)
	e.policy.Groups = map[string]policy.Group{"one": {MaxRunning: 1}}
	ctx := context.Background()
	exit := fixture(b, "exit-with.sh")
	var queued, chained []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		gate := filepath.Join(e.root, "gate-"+strconv.Itoa(i))
		a, err := e.r.Start(ctx, []string{fixture(b, "wait-for-file.sh"), gate, "0"}, runner.StartOptions{Group: "one"})
		if err != nil {
			b.Fatal(err)
		}
		next, err := e.r.Start(ctx, []string{exit, "0"}, runner.StartOptions{Group: "one"})
		if err != nil || next.State != bgcmd.StateQueued {
			b.Fatalf("%v %v", err, next)
		}
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			b.Fatal(err)
		}
		if s, err := e.r.Await(ctx, next.ID, time.Minute); err != nil || s.State != bgcmd.StateExited {
			b.Fatalf("%v %v", err, s)
		}
		queued = append(queued, eventAt(b, e, next.ID, bgcmd.StateRunning).Sub(eventAt(b, e, a.ID, bgcmd.StateExited)))

		// Unqueued: await, then start.
		gate2 := gate + "-chained"
		c, err := e.r.Start(ctx, []string{fixture(b, "wait-for-file.sh"), gate2, "0"}, runner.StartOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(gate2, nil, 0o600); err != nil {
			b.Fatal(err)
		}
		if _, err := e.r.Await(ctx, c.ID, time.Minute); err != nil {
			b.Fatal(err)
		}
		d, err := e.r.Start(ctx, []string{exit, "0"}, runner.StartOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.r.Await(ctx, d.ID, time.Minute); err != nil {
			b.Fatal(err)
		}
		chained = append(chained, eventAt(b, e, d.ID, bgcmd.StateRunning).Sub(eventAt(b, e, c.ID, bgcmd.StateExited)))
	}
	b.StopTimer()
	b.ReportMetric(medianMS(queued), "handoff-median-ms")
	b.ReportMetric(medianMS(chained), "await-then-start-median-ms")
}

// BenchmarkQueueThroughputGroup4: jobs per second through a group with
// max_running = 4, all started at once and dispatched by the queue; beside
// it, the unqueued figure of the same run: four goroutines each starting
// and awaiting jobs, the same concurrency held by the caller.
func BenchmarkQueueThroughputGroup4(b *testing.B) {
	e := benchEnv(b, false, "/bin/true")
	e.policy.Groups = map[string]policy.Group{"four": {MaxRunning: 4}}
	e.policy.MaxQueued = 1 << 20 // b.N jobs wait at once
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	ids := make([]string, 0, b.N)
	for i := 0; i < b.N; i++ {
		j, err := e.r.Start(ctx, []string{"/bin/true"}, runner.StartOptions{Group: "four"})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	for _, id := range ids {
		if s, err := e.r.Await(ctx, id, 5*time.Minute); err != nil || s.State != bgcmd.StateExited {
			b.Fatalf("%v %v", err, s)
		}
	}
	queuedRate := float64(b.N) / time.Since(start).Seconds()

	start = time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	var failed error
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if n >= b.N || failed != nil {
					mu.Unlock()
					return
				}
				n++
				mu.Unlock()
				j, err := e.r.Start(ctx, []string{"/bin/true"}, runner.StartOptions{})
				if err == nil {
					_, err = e.r.Await(ctx, j.ID, 5*time.Minute)
				}
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	b.StopTimer()
	b.ReportMetric(queuedRate, "queued-jobs/s")
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "unqueued-jobs/s")
}
