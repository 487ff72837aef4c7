package prefault

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTheTextIsMappedAtInit: once init has run, every page of the
// executable's text is resident in this process (its resident size is
// the mapping's size), where a process maps in only the code it runs.
func TestTheTextIsMappedAtInit(t *testing.T) {
	lo, _, ok := textMapping()
	require.True(t, ok, "the text's mapping is in /proc/self/maps")
	vma := smapsOf(t, lo)
	require.Equal(t, "r-xp", vma["perms"], "the code's mapping: %v", vma)
	kib := func(k string) int {
		n, err := strconv.Atoi(strings.TrimSuffix(vma[k], " kB"))
		require.NoError(t, err, "%s of %v", k, vma)
		return n
	}
	require.Greater(t, kib("Size"), 1024, "a text of megabytes: %v", vma)
	require.Equal(t, kib("Size"), kib("Rss"), "every page of the text is mapped: %v", vma)
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
		lo, hi, ok := mappingOf(maps, tc.addr)
		require.Equal(t, [3]any{tc.lo, tc.hi, tc.ok}, [3]any{lo, hi, ok}, "%#x", tc.addr)
	}
	_, _, ok := mappingOf([]byte("garbage\n-\n00400000\n"), 0x400000)
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
	lo, hi, ok := textMapping()
	require.True(t, ok)
	vec, ok := sampleResidency(lo, hi)
	require.True(t, ok)
	require.True(t, mostlyCached(vec[:]), "%v", vec)
	_, ok = sampleResidency(lo, lo+pageSize)
	require.False(t, ok, "a range smaller than the sample")
}
