package jobstore

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"modernc.org/libc"
)

// TestWarmHeapMapsInWhatTheSQLiteAllocatorHandsOutNext: in a fresh
// process (this test binary run again, so that no connection has touched
// the SQLite library's heap yet), the blocks the library allocates after
// warmHeap lie in pages that were already resident before they were
// allocated. "merged" first places anonymous mappings of 4 MiB against
// both ends of the allocator's mapping, as the kernel may when it merges
// neighbours, and checks that warmHeap still maps in the allocator's
// pages and leaves the neighbours' far parts alone.
func TestWarmHeapMapsInWhatTheSQLiteAllocatorHandsOutNext(t *testing.T) {
	if mode := os.Getenv("BGCMD_WARMHEAP_CHILD"); mode != "" {
		warmHeapChild(t, mode == "merged")
		return
	}
	for _, mode := range []string{"alone", "merged"} {
		t.Run(mode, func(t *testing.T) {
			// A child finds no room beside the allocator's mapping now
			// and then (other mappings made meanwhile, the race
			// detector's among them, can border it on both sides): it
			// says so and the next child, laid out afresh, tries again.
			var out []byte
			for range noRoomTries {
				cmd := exec.Command(os.Args[0], "-test.run=^TestWarmHeapMapsInWhatTheSQLiteAllocatorHandsOutNext$", "-test.v")
				cmd.Env = append(os.Environ(), "BGCMD_WARMHEAP_CHILD="+mode)
				var err error
				out, err = cmd.CombinedOutput()
				require.NoError(t, err, "%s", out)
				if !strings.Contains(string(out), noRoom) {
					break
				}
			}
			require.Contains(t, string(out), "--- PASS: TestWarmHeapMapsInWhatTheSQLiteAllocatorHandsOutNext")
		})
	}
}

// noRoom is what a "merged" child says, skipping, when it could map no
// neighbour against the allocator's mapping; noRoomTries bounds the
// children tried.
const (
	noRoom      = "no room beside the allocator's mapping"
	noRoomTries = 10
)

func warmHeapChild(t *testing.T, merge bool) {
	tls := libc.NewTLS()
	defer tls.Close()
	p := libc.Xmalloc(tls, 64)
	require.NotZero(t, p)
	defer libc.Xfree(tls, p)
	lo, hi, ok := writableMappingOf(p)
	require.True(t, ok, "the block %#x lies in a private writable mapping", p)

	var cold [][2]uintptr // parts of the neighbours warmHeap must not map in
	if merge {
		const n = 4 << 20
		placed := 0
		for _, at := range []uintptr{hi, lo - n} {
			if mapAnonAt(t, at, n) {
				placed++
				if at == hi {
					cold = append(cold, [2]uintptr{hi + 1<<20, hi + n})
				} else {
					cold = append(cold, [2]uintptr{at, lo - 1<<20})
				}
			}
		}
		if placed == 0 {
			t.Skipf("%s %#x-%#x", noRoom, lo, hi)
		}
		was := hi - lo
		lo, hi, ok = writableMappingOf(p)
		require.True(t, ok)
		require.Greater(t, hi-lo, was, "the kernel merged the neighbours into the allocator's mapping")
	}

	warmHeap()
	before := residency(t, lo, hi)

	page := uintptr(os.Getpagesize())
	blocks := 0
	for _, size := range []uintptr{100, 900, 3000} {
		for range 60 << 10 / size {
			b := libc.Xmalloc(tls, libc.Tsize_t(size))
			require.NotZero(t, b)
			defer libc.Xfree(tls, b)
			require.True(t, lo <= b && b+size <= hi, "the block %#x lies in %#x-%#x", b, lo, hi)
			for _, at := range []uintptr{b, b + size - 1} {
				require.True(t, before[(at-lo)/page], "the page of %#x was resident before the block was allocated", at)
			}
			blocks++
		}
	}
	t.Logf("%d blocks in pages resident before their allocation", blocks)

	after := residency(t, lo, hi)
	for _, c := range cold {
		for at := c[0]; at < c[1]; at += page {
			require.False(t, after[(at-lo)/page], "the neighbour's page %#x, far from the allocator's, was mapped in", at)
		}
	}
}

// mapAnonAt maps n bytes of private anonymous memory at exactly at, and
// reports whether it could; the test unmaps it at its end.
func mapAnonAt(t *testing.T, at, n uintptr) bool {
	addr, _, errno := unix.Syscall6(unix.SYS_MMAP, at, n, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE, ^uintptr(0), 0)
	if errno != 0 {
		return false
	}
	t.Cleanup(func() { _, _, _ = unix.Syscall(unix.SYS_MUNMAP, addr, n, 0) })
	return addr == at
}

// residency reports, page by page, which pages of [lo, hi) are resident.
func residency(t *testing.T, lo, hi uintptr) []bool {
	page := uintptr(os.Getpagesize())
	vec := make([]byte, (hi-lo)/page)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(&vec[0])))
	require.Zero(t, errno, "mincore")
	out := make([]bool, len(vec))
	for i, v := range vec {
		out[i] = v&1 == 1
	}
	return out
}
