package prefault

import (
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestTheTextAndReadOnlyDataAreMappedAtInit: once init has run, every
// page of the executable's text and of its read-only data (the function
// table among it) is resident in this process (each mapping's resident
// size is its size), where a process maps in only the code it runs and
// the data it reads.
func TestTheTextAndReadOnlyDataAreMappedAtInit(t *testing.T) {
	segs := ownSegments(t)
	for i, perms := range []string{"r-xp", "r--p"} {
		require.True(t, segs[i].ok, "the %s mapping is in /proc/self/maps", perms)
		vma := smapsOf(t, segs[i].lo)
		require.Equal(t, perms, vma["perms"], "%v", vma)
		kib := func(k string) int {
			n, err := strconv.Atoi(strings.TrimSuffix(vma[k], " kB"))
			require.NoError(t, err, "%s of %v", k, vma)
			return n
		}
		require.Greater(t, kib("Size"), 1024, "a segment of megabytes: %v", vma)
		require.Equal(t, kib("Size"), kib("Rss"), "every page of the %s mapping is mapped: %v", perms, vma)
	}
	// This test's code is in the first, and the function table the
	// runtime walks stacks with in the second: a *runtime.Func is the
	// table's entry for its function.
	pc := reflect.ValueOf(ownSegments).Pointer()
	require.True(t, segs[0].lo <= pc && pc < segs[0].hi, "%#x in the text %#x-%#x", pc, segs[0].lo, segs[0].hi)
	entry := uintptr(unsafe.Pointer(runtime.FuncForPC(pc)))
	require.True(t, segs[1].lo <= entry && entry < segs[1].hi,
		"%#x in the read-only data %#x-%#x", entry, segs[1].lo, segs[1].hi)
}

// ownSegments returns segments of this process's /proc/self/maps.
func ownSegments(t *testing.T) [2]segment {
	maps, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	return segments(maps)
}

// TestATextReadColdIsLeftToFaultIn: the text is mapped in only when the
// page cache holds at least 90% of it.
func TestATextReadColdIsLeftToFaultIn(t *testing.T) {
	vec := func(in, out int) []byte {
		b := make([]byte, in+out)
		for i := range in {
			b[i] = 1 | 0xfe // only bit 0 says resident
		}
		for i := in; i < in+out; i++ {
			b[i] = 0xfe
		}
		return b
	}
	require.True(t, mostlyCached(vec(10, 0)))
	require.True(t, mostlyCached(vec(9, 1)))
	require.False(t, mostlyCached(vec(89, 11)))
	require.False(t, mostlyCached(vec(0, 10)), "a binary read cold")
	require.False(t, mostlyCached(nil))
}

// TestSampleResidencySeesTheTextCached: a text that runs (this test's own)
// is in the page cache where it is sampled.
func TestSampleResidencySeesTheTextCached(t *testing.T) {
	text := ownSegments(t)[0]
	require.True(t, text.ok)
	lo, hi := text.lo, text.hi
	vec, ok := sampleResidency(lo, hi)
	require.True(t, ok)
	require.True(t, mostlyCached(vec[:]), "%v", vec)
	_, ok = sampleResidency(lo, lo+pageSize)
	require.False(t, ok, "a range smaller than the sample")
}
