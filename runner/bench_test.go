package runner_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/launch"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/runner"
)

// benchEnv is an env whose policy allows allow and output up to 2 GiB.
func benchEnv(b *testing.B, detached bool, allow ...string) *env {
	return benchEnvOf(b, detached, "", allow...)
}

// releaseBenchEnv is benchEnv, detached, with its supervisors started from
// bgcmd-supervisor as make build builds it (see releaseSupervisor).
func releaseBenchEnv(b *testing.B, allow ...string) *env {
	return benchEnvOf(b, true, releaseSupervisor(b), allow...)
}

// releaseSupervisor builds bgcmd-supervisor as make build builds it (lean,
// static) into a temporary directory and returns its path. It is the
// binary `bgcmd run` and `bgcmd mcp` start their detached supervisors
// from, so a benchmark of what a supervisor costs measures it rather than
// this test binary, whose start-up carries the test packages' (some 12 ms
// more CPU per supervisor, measured with 1 MB captures).
func releaseSupervisor(b *testing.B) string {
	dir := b.TempDir()
	require.NoError(b, testkit.BuildSupervisor("go", dir, "", false))
	return filepath.Join(dir, launch.SupervisorName)
}

// benchEnvOf is benchEnv with its supervisors started from supervisor
// (this test binary when empty).
func benchEnvOf(b *testing.B, detached bool, supervisor string, allow ...string) *env {
	e := newEnv(b, detached)
	e.supervisor = supervisor
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
