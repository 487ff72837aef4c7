//go:build linux

package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkExeHashAtStart measures what recording the executable's sha256
// adds to a start: the first start of a binary (uncached: the whole file
// hashed), every later one in the same process (cached: one open and one
// fstat) and every later one in a new process, as every `bgcmd run` is
// (home: the same, and a read of the home's digest cache), each against
// starting and waiting for /bin/true in the same run, the floor of any
// start.
func BenchmarkExeHashAtStart(b *testing.B) {
	exe, err := os.Executable() // this test binary: several MiB, a large tool
	if err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		b.Fatal(err)
	}
	// No racy window: this test binary was written moments ago, and the
	// window only decides whether a digest is cached, not what a hit costs.
	disk := exeDigests{path: filepath.Join(b.TempDir(), digestsFile)}
	for _, mode := range []string{"uncached", "cached", "home"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "home" && hashExecutable(exe, disk) == "" { // recorded
				b.Fatal("no hash")
			}
			var hash, start time.Duration
			for i := 0; i < b.N; i++ {
				if mode != "cached" {
					forget()
				}
				if mode == "uncached" {
					require.NoError(b, os.RemoveAll(disk.path))
				}
				t0 := time.Now()
				if hashExecutable(exe, disk) == "" {
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
	first := hashExecutable(path, exeDigests{})
	if first != "7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed" {
		t.Fatalf("sha256 of %q is %s", "one", first)
	}
	if again := hashExecutable(path, exeDigests{}); again != first {
		t.Fatalf("cached %s, want %s", again, first)
	}
	// Rewritten in place with the same size: ctime moves, the cache misses.
	if err := os.WriteFile(path, []byte("two"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := hashExecutable(path, exeDigests{}); got == first || got != "3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3" {
		t.Fatalf("after a rewrite: %s", got)
	}
	if hashExecutable(t.TempDir()+"/absent", exeDigests{}) != "" {
		t.Fatal("an absent file has no hash")
	}
}

// forget empties this process's executable hash cache, as a new process
// starts.
func forget() {
	exeHashes.Lock()
	exeHashes.m = map[exeKey]string{}
	exeHashes.Unlock()
}

// The home's digest cache serves a digest to a new process for the very
// version of the file it was computed from, and for nothing else: a
// rewritten file is hashed again; a malformed cache, or a symbolic link in
// its place, is an empty one, and the link's target is never written.
func TestHashExecutableServesTheHomeCacheForTheSameFileOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	disk := exeDigests{path: filepath.Join(dir, digestsFile)}
	tool := filepath.Join(dir, "tool")
	const one = "7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed"
	const two = "3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3"
	require.NoError(t, os.WriteFile(tool, []byte("one"), 0o700))
	require.Equal(t, one, hashExecutable(tool, disk))
	entries := disk.read()
	require.Len(t, entries, 1)
	require.Equal(t, tool, entries[0].Path)
	require.Equal(t, one, entries[0].SHA256)

	// A new process is served from the file, without reading the tool:
	// a digest planted there for the same key is what it returns.
	planted := strings.Repeat("f", 64)
	entries[0].SHA256 = planted
	data, err := json.Marshal(entries)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(disk.path, data, 0o600))
	forget()
	require.Equal(t, planted, hashExecutable(tool, disk))

	// Rewritten (same size): a new key, hashed again, the entry replaced.
	require.NoError(t, os.WriteFile(tool, []byte("two"), 0o700))
	forget()
	require.Equal(t, two, hashExecutable(tool, disk))
	entries = disk.read()
	require.Len(t, entries, 1)
	require.Equal(t, two, entries[0].SHA256)

	// Malformed: an empty cache, then rewritten whole.
	require.NoError(t, os.WriteFile(disk.path, []byte("{"), 0o600))
	forget()
	require.Equal(t, two, hashExecutable(tool, disk))
	require.Len(t, disk.read(), 1)

	// A symbolic link in its place is neither read nor written through.
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, data, 0o600)) // the planted digest
	require.NoError(t, os.Remove(disk.path))
	require.NoError(t, os.Symlink(victim, disk.path))
	forget()
	require.Equal(t, two, hashExecutable(tool, disk), "the link's planted digest is not served")
	got, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, data, got, "the link's target is untouched")
	fi, err := os.Lstat(disk.path)
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), "the link is replaced by the cache itself")

	// A file changed within the racy window is hashed, not cached.
	fresh := filepath.Join(dir, "fresh")
	require.NoError(t, os.WriteFile(fresh, []byte("one"), 0o700))
	racy := exeDigests{path: disk.path, racy: time.Hour}
	require.Equal(t, one, hashExecutable(fresh, racy))
	for _, e := range disk.read() {
		require.NotEqual(t, fresh, e.Path, "a racy file's digest is not recorded")
	}
	// Rewritten in place to the same size, perhaps within the same clock
	// tick (its key unchanged): still the new bytes' digest.
	require.NoError(t, os.WriteFile(fresh, []byte("two"), 0o700))
	require.Equal(t, two, hashExecutable(fresh, racy))

	// Bounded: the newest maxDigests entries, newest first.
	for i := range maxDigests + 2 {
		disk.record(exeKey{path: fmt.Sprintf("/tool/%d", i)}, fmt.Sprintf("%064d", i))
	}
	entries = disk.read()
	require.Len(t, entries, maxDigests)
	require.Equal(t, fmt.Sprintf("/tool/%d", maxDigests+1), entries[0].Path)
}
