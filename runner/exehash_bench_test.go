//go:build linux

package runner

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkExeHashAtStart measures what recording the executable's sha256
// adds to a start: the first start of a binary (uncached: the whole file
// hashed) and every later one (cached: one open and one fstat), each
// against starting and waiting for /bin/true in the same run, the floor of
// any start.
func BenchmarkExeHashAtStart(b *testing.B) {
	exe, err := os.Executable() // this test binary: several MiB, a large tool
	if err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"uncached", "cached"} {
		b.Run(mode, func(b *testing.B) {
			var hash, start time.Duration
			for i := 0; i < b.N; i++ {
				if mode == "uncached" {
					exeHashes.Lock()
					exeHashes.m = map[exeKey]string{}
					exeHashes.Unlock()
				}
				t0 := time.Now()
				if hashExecutable(exe) == "" {
					b.Fatal("no hash")
				}
				t1 := time.Now()
				if err := exec.Command("/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
				hash += t1.Sub(t0)
				start += time.Since(t1)
			}
			b.ReportMetric(float64(hash.Microseconds())/float64(b.N), "µs/hash")
			b.ReportMetric(float64(start.Microseconds())/float64(b.N), "baseline_µs/exec")
			b.ReportMetric(hash.Seconds()/start.Seconds(), "x_baseline")
			b.ReportMetric(float64(fi.Size())/(1<<20), "MiB")
		})
	}
}

func TestHashExecutableFollowsTheFileNotTheCache(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/tool"
	if err := os.WriteFile(path, []byte("one"), 0o700); err != nil {
		t.Fatal(err)
	}
	first := hashExecutable(path)
	if first != "7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed" {
		t.Fatalf("sha256 of %q is %s", "one", first)
	}
	if again := hashExecutable(path); again != first {
		t.Fatalf("cached %s, want %s", again, first)
	}
	// Rewritten in place with the same size: ctime moves, the cache misses.
	if err := os.WriteFile(path, []byte("two"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := hashExecutable(path); got == first || got != "3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3" {
		t.Fatalf("after a rewrite: %s", got)
	}
	if hashExecutable(t.TempDir()+"/absent") != "" {
		t.Fatal("an absent file has no hash")
	}
}
