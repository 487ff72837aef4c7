package runner_test

import (
	"context"
	"os/exec"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

func benchEnv(b *testing.B, detached bool, allow ...string) *env {
	e := newEnv(b, detached)
	e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, allow...)
	e.policy.MaxOutputBytes = 2 << 30
	e.r = e.newRunner(detached)
	return e
}

// BenchmarkLifecycleTrue: the full lifecycle of /bin/true through bgcmd
// (policy, row, in-process supervisor, every transition durable, banked
// output), one at a time.
func BenchmarkLifecycleTrue(b *testing.B) {
	e := benchEnv(b, false, "/bin/true")
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j, err := e.r.Start(ctx, []string{"/bin/true"}, runner.StartOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if s, err := e.r.Await(ctx, j.ID, time.Minute); err != nil || s.State != bgcmd.StateExited {
			b.Fatalf("%v %v", err, s)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkRawExecTrue is the baseline: exec.Command("/bin/true").Run().
func BenchmarkRawExecTrue(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkLifecycleTrueConcurrent4: the same lifecycle with 4 starters.
func BenchmarkLifecycleTrueConcurrent4(b *testing.B) {
	e := benchEnv(b, false, "/bin/true")
	ctx := context.Background()
	var next sync.Mutex
	n := 0
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				if n >= b.N {
					next.Unlock()
					return
				}
				n++
				next.Unlock()
				j, err := e.r.Start(ctx, []string{"/bin/true"}, runner.StartOptions{})
				if err != nil {
					b.Error(err)
					return
				}
				if _, err := e.r.Await(ctx, j.ID, time.Minute); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkDetachedStart: runner.Start with a detached supervisor until it
// returns (the child running), vs BenchmarkRawExecTrue.
func BenchmarkDetachedStart(b *testing.B) {
	e := benchEnv(b, true, "/bin/true")
	ctx := context.Background()
	ids := make([]string, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j, err := e.r.Start(ctx, []string{"/bin/true"}, runner.StartOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	b.StopTimer()
	for _, id := range ids {
		e.await(id)
	}
}

// minSamples is the fewest samples a benchmark makes whose one run takes
// seconds (capture, reconcile, prune): the report shows the median of the
// samples and their spread, not one lucky or unlucky run.
const minSamples = 3

// sampleCount is how many samples such a benchmark makes: b.N, and at
// least minSamples.
func sampleCount(b *testing.B) int { return max(b.N, minSamples) }

// samples collects the per-sample values of a benchmark's metrics. The
// benchmarks that use it interleave bgcmd and its baseline in every sample,
// so a busy neighbour slows both alike.
type samples struct {
	units []string
	vals  map[string][]float64
}

// add records one sample's value of a metric.
func (s *samples) add(unit string, v float64) {
	if s.vals == nil {
		s.vals = map[string][]float64{}
	}
	if _, ok := s.vals[unit]; !ok {
		s.units = append(s.units, unit)
	}
	s.vals[unit] = append(s.vals[unit], v)
}

// op records one sample's time of bgcmd's run: it becomes ns/op.
func (s *samples) op(d time.Duration) { s.add("ns/op", float64(d.Nanoseconds())) }

// report reports every metric's median under its own unit (ns/op and MB/s
// included: they replace the framework's, which divide by b.N) and its
// spread as min-<unit> and max-<unit>, plus the number of samples.
func (s *samples) report(b *testing.B) {
	b.Helper()
	for _, u := range s.units {
		v := append([]float64(nil), s.vals[u]...)
		sort.Float64s(v)
		b.ReportMetric(median(v), u)
		b.ReportMetric(v[0], "min-"+u)
		b.ReportMetric(v[len(v)-1], "max-"+u)
	}
	if len(s.units) > 0 {
		b.ReportMetric(float64(len(s.vals[s.units[0]])), "samples")
	}
}

// median of sorted values.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
