package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// BenchmarkContainmentCost: the added cost per job of containment and
// accounting in the in-process mode (each job under a reaper process that
// is a subreaper, kills and reaps every descendant and reports the usage)
// against the lifecycle without it (process-group containment, as in a host
// that never called MaybeSupervise), measured alternately in the same run
// on /bin/true. Reports both per-job times, the difference and the ratio.
func BenchmarkContainmentCost(b *testing.B) {
	group := benchEnv(b, false, "/bin/true")
	runner.UseProcessGroupContainment(group.r)
	reaped := benchEnv(b, false, "/bin/true")
	ctx := context.Background()
	one := func(e *env) time.Duration {
		t0 := time.Now()
		j, err := e.r.Start(ctx, []string{"/bin/true"}, runner.StartOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if s, err := e.r.Await(ctx, j.ID, time.Minute); err != nil || s.State != bgcmd.StateExited {
			b.Fatalf("%v %v", err, s)
		}
		return time.Since(t0)
	}
	var tg, tr time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tg += one(group)
		tr += one(reaped)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tg.Microseconds())/n/1000, "group-ms/job")
	b.ReportMetric(float64(tr.Microseconds())/n/1000, "subreaper-ms/job")
	b.ReportMetric(float64((tr-tg).Microseconds())/n/1000, "added-ms/job")
	b.ReportMetric(float64(tr)/float64(tg), "ratio")
}
