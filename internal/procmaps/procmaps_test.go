package procmaps

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFindFindsTheMappingThatHoldsAnAddress reads lines as
// /proc/self/maps writes them.
func TestFindFindsTheMappingThatHoldsAnAddress(t *testing.T) {
	maps := []byte("00400000-00e53000 r-xp 00000000 fd:01 123 /usr/bin/bgcmd\n" +
		"00e53000-019b1000 r--p 00a53000 fd:01 123 /usr/bin/bgcmd\n" +
		"7ffd1c2f0000-7ffd1c311000 rw-p 00000000 00:00 0 [stack]\n" +
		"7ffd1c311000-7ffd1c312000 rw-s 00000000 00:01 7 /memfd:x (deleted)\n" +
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
		lo, hi, ok := Find(maps, tc.addr, "r-x")
		require.Equal(t, [3]any{tc.lo, tc.hi, tc.ok}, [3]any{lo, hi, ok}, "%#x", tc.addr)
	}
	lo, hi, ok := Find(maps, 0xe53000, "r--")
	require.Equal(t, [3]any{uintptr(0xe53000), uintptr(0x19b1000), true}, [3]any{lo, hi, ok}, "read-only data")
	_, _, ok = Find(maps, 0x400000, "r--")
	require.False(t, ok, "code, not read-only data")
	lo, hi, ok = Find(maps, 0x7ffd1c2f0010, "rw-p")
	require.Equal(t, [3]any{uintptr(0x7ffd1c2f0000), uintptr(0x7ffd1c311000), true}, [3]any{lo, hi, ok}, "private writable memory")
	_, _, ok = Find(maps, 0x7ffd1c311010, "rw-p")
	require.False(t, ok, "a shared mapping is not private")
	_, _, ok = Find([]byte("garbage\n-\n00400000\n"), 0x400000, "r-x")
	require.False(t, ok)
}
