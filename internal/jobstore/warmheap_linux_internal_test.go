package jobstore

import (
	"os"
	"os/exec"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"modernc.org/libc"
)

// TestWarmHeapMapsInTheSQLiteAllocatorsFirstRegion: in a fresh process
// (this test binary run again, so that no connection has touched the
// SQLite library's heap yet), after warmHeap every page of the mapping
// that a small block of that heap lies in is resident, where only the
// pages written so far would be.
func TestWarmHeapMapsInTheSQLiteAllocatorsFirstRegion(t *testing.T) {
	if os.Getenv("BGCMD_WARMHEAP_CHILD") == "1" {
		warmHeap()
		tls := libc.NewTLS()
		defer tls.Close()
		p := libc.Xmalloc(tls, 64)
		require.NotZero(t, p)
		defer libc.Xfree(tls, p)
		lo, hi, ok := writableMappingOf(p)
		require.True(t, ok, "the block %#x lies in a private writable mapping", p)
		require.LessOrEqual(t, hi-lo, uintptr(warmHeapMax))
		vec := make([]byte, (hi-lo)/uintptr(os.Getpagesize()))
		_, _, errno := unix.Syscall(unix.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(&vec[0])))
		require.Zero(t, errno, "mincore")
		resident := 0
		for _, v := range vec {
			resident += int(v & 1)
		}
		require.Equal(t, len(vec), resident, "pages of %#x-%#x resident", lo, hi)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWarmHeapMapsInTheSQLiteAllocatorsFirstRegion$", "-test.v")
	cmd.Env = append(os.Environ(), "BGCMD_WARMHEAP_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestWarmHeapMapsInTheSQLiteAllocatorsFirstRegion")
}
