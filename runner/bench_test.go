package runner_test

import (
	"context"
	"testing"
	"time"

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
	for range b.N {
		lifecycle(b, ctx, e.r)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkRawExecTrue is the baseline: exec.Command("/bin/true").Run().
func BenchmarkRawExecTrue(b *testing.B) {
	for range b.N {
		rawExec(b)
	}
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

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
