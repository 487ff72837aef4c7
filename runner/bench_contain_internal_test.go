package runner

import (
	"os/exec"
	"testing"
	"time"
)

// BenchmarkSubreaperEndOfJob: what a detached supervisor adds when a job's
// main process has exited (stop the zombie reaper, make sure no descendant
// is left, sum the usage) against what it did before in the same run (kill
// what is left of the process group), with no descendant left, the common
// case. Both run after a real child was waited.
func BenchmarkSubreaperEndOfJob(b *testing.B) {
	var before, after time.Duration
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("/bin/true")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		z := startZombieReaper(cmd.Process.Pid)
		_ = cmd.Wait()
		t0 := time.Now()
		_ = killLeftovers(cmd.Process.Pid)
		t1 := time.Now()
		var u usageSum
		u.addSum(z.stop())
		_ = reapTree(&u)
		after += time.Since(t1)
		before += t1.Sub(t0)
	}
	b.ReportMetric(float64(before.Nanoseconds())/float64(b.N)/1000, "group-us/job")
	b.ReportMetric(float64(after.Nanoseconds())/float64(b.N)/1000, "subreaper-us/job")
}
