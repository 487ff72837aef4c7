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

// TestMappingOfFindsTheMappingThatHoldsAnAddress reads lines as
// /proc/self/maps writes them.
func TestMappingOfFindsTheMappingThatHoldsAnAddress(t *testing.T) {
	maps := []byte("00400000-00e53000 r-xp 00000000 fd:01 123 /usr/bin/bgcmd\n" +
		"00e53000-019b1000 r--p 00a53000 fd:01 123 /usr/bin/bgcmd\n" +
		"7ffd1c2f0000-7ffd1c311000 rw-p 00000000 00:00 0 [stack]\n" +
		"7ffd1c3f3000-7ffd1c3f5000 r-xp 00000000 00:00 0 [vdso]")
	for _, tc := range []struct {
		addr   uintptr
		lo, hi uintptr
		ok     bool
	}{
		{0x400000, 0x400000, 0xe53000, true},
		{0xe52fff, 0x400000, 0xe53000, true},
		{0xe53000, 0, 0, false}, // read-only data, not code
		{0x7ffd1c2f0010, 0, 0, false},
		{0x7ffd1c3f4000, 0x7ffd1c3f3000, 0x7ffd1c3f5000, true},
		{0x3fffff, 0, 0, false},
	} {
		lo, hi, ok := mappingOf(maps, tc.addr, "r-x")
		require.Equal(t, [3]any{tc.lo, tc.hi, tc.ok}, [3]any{lo, hi, ok}, "%#x", tc.addr)
	}
	lo, hi, ok := mappingOf(maps, 0xe53000, "r--")
	require.Equal(t, [3]any{uintptr(0xe53000), uintptr(0x19b1000), true}, [3]any{lo, hi, ok}, "read-only data")
	_, _, ok = mappingOf(maps, 0x400000, "r--")
	require.False(t, ok, "code, not read-only data")
	_, _, ok = mappingOf([]byte("garbage\n-\n00400000\n"), 0x400000, "r-x")
	require.False(t, ok)
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
