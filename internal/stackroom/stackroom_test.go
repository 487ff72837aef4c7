package stackroom_test

import (
	"runtime/debug"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/stackroom"
)

// depth is how deep below its caller deep goes: most of Room, and more
// than a goroutine's first stack holds.
const depth = stackroom.Room * 3 / 4

// moves reports, from a new goroutine, whether its stack moved (a copy, as
// the runtime makes to grow it) during Grow, if grow is set, and then
// during a call depth bytes deep. A local's address, taken as a number,
// is where the stack was; the runtime moves the local with the stack.
func moves(t *testing.T, grow bool) (inGrow, inDeep bool) {
	t.Helper()
	// No collection meanwhile: one could shrink a stack it finds mostly
	// unused, and the deep call would grow it again.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	done := make(chan [2]bool)
	go func() {
		var local byte
		at := func() uintptr { return uintptr(unsafe.Pointer(&local)) }
		start := at()
		if grow {
			stackroom.Grow()
		}
		grown := at()
		deep(depth / 512)
		done <- [2]bool{grown != start, at() != grown}
	}()
	r := <-done
	return r[0], r[1]
}

// deep recurses n frames of over 512 bytes each.
//
//go:noinline
func deep(n int) byte {
	var pad [512]byte
	pad[n%len(pad)] = byte(n)
	if n == 0 {
		return pad[0]
	}
	return deep(n-1) + pad[n%len(pad)]
}

func TestGrowLeavesADeepCallNothingToCopy(t *testing.T) {
	inGrow, inDeep := moves(t, true)
	require.True(t, inGrow, "Grow left a new goroutine's stack where it was: it did not grow it")
	require.False(t, inDeep, "a call %d bytes deep moved the stack Grow had grown to %d", depth, stackroom.Room)
}

func TestWithoutGrowTheSameDeepCallCopiesTheStack(t *testing.T) {
	// The check above can fail: without Grow, the same call moves the stack.
	_, inDeep := moves(t, false)
	require.True(t, inDeep, "a call %d bytes deep did not move a new goroutine's stack", depth)
}
