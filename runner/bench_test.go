package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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

// captureSize is the output size of the capture benchmarks; BGCMD_BENCH_CAPTURE_MB
// overrides it (default 1024 MiB).
func captureSize() int64 {
	if v, err := strconv.Atoi(os.Getenv("BGCMD_BENCH_CAPTURE_MB")); err == nil && v > 0 {
		return int64(v) << 20
	}
	return 1 << 30
}

func captureArgv(large bool) []string {
	n := captureSize()
	if large {
		return []string{"/bin/dd", "if=/dev/zero", "bs=1M", "count=" + strconv.FormatInt(n>>20, 10), "status=none"}
	}
	return []string{"/usr/bin/head", "-c", strconv.FormatInt(n, 10), "/dev/zero"}
}

func benchCapture(b *testing.B, large bool) {
	e := benchEnv(b, false, "/bin/dd", "/usr/bin/head")
	ctx := context.Background()
	argv := captureArgv(large)
	b.SetBytes(captureSize())
	before := rssKiB("self")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j, err := e.r.Start(ctx, argv, runner.StartOptions{})
		if err != nil {
			b.Fatal(err)
		}
		s, err := e.r.Await(ctx, j.ID, 10*time.Minute)
		if err != nil || s.State != bgcmd.StateExited || s.Stdout.Bytes != captureSize() {
			b.Fatalf("%v %+v", err, s)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(rssKiB("self")-before), "rss-growth-KiB")
}

func benchDirect(b *testing.B, large bool) {
	argv := captureArgv(large)
	dir := b.TempDir()
	b.SetBytes(captureSize())
	for i := 0; i < b.N; i++ {
		f, err := os.Create(filepath.Join(dir, "out"))
		require.NoError(b, err)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout = f
		require.NoError(b, cmd.Run())
		require.NoError(b, f.Close())
	}
}

// BenchmarkCaptureSmallWrites: head -c writes small chunks through bgcmd's
// capture (cap, tail, hash and index all on).
func BenchmarkCaptureSmallWrites(b *testing.B) { benchCapture(b, false) }

// BenchmarkDirectFileSmallWrites: the same command writing straight to a file.
func BenchmarkDirectFileSmallWrites(b *testing.B) { benchDirect(b, false) }

// BenchmarkCaptureLargeWrites: dd bs=1M through bgcmd's capture.
func BenchmarkCaptureLargeWrites(b *testing.B) { benchCapture(b, true) }

// BenchmarkDirectFileLargeWrites: dd bs=1M straight to a file.
func BenchmarkDirectFileLargeWrites(b *testing.B) { benchDirect(b, true) }

// rssKiB reads VmRSS of a process from /proc.
func rssKiB(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			n, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return n
		}
	}
	return -1
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

// BenchmarkReconcile1000Orphans: reconcile of 1,000 jobs whose supervisor
// died, each with its logs on disk.
func BenchmarkReconcile1000Orphans(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := benchEnv(b, false)
		dead := deadPID(b)
		for range 1000 {
			orphanRow(b, e, dead, 0)
		}
		b.StartTimer()
		rep, err := e.r.Reconcile(context.Background())
		require.NoError(b, err)
		require.Equal(b, 1000, rep.Orphaned)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/1000-orphans")
}
