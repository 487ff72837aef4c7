package prefault

import (
	"syscall"
	"unsafe"
)

// hugePage is the size and alignment of a transparent huge page on amd64
// and arm64 (4 KiB base pages); arenaBytes is that of a Go heap arena on
// 64-bit Linux, all of whose mapped part is heap.
const (
	hugePage   = 2 << 20
	arenaBytes = 64 << 20
)

// The madvise(2) advice values (linux/mman.h), the same on every Linux
// architecture, spelled out rather than taken from golang.org/x/sys/unix,
// whose import would hold this package's init back (see the package
// comment).
const (
	madvHugePage = 14
	madvCollapse = 25
)

// first is a heap object allocated at init: its page lies where the heap
// starts.
var first *[64]byte

// heap backs the 2 MiB around the heap's start with a huge page, and asks
// for huge pages on the rest of the heap's first arena.
func heap() {
	first = new([64]byte)
	p := uintptr(unsafe.Pointer(first))
	// Ask for huge pages on the whole arena: the kernel applies it to the
	// part that is mapped (and says ENOMEM for the rest).
	madvise(p&^(arenaBytes-1), arenaBytes, madvHugePage)
	madvise(p&^(hugePage-1), hugePage, madvCollapse)
}

// madvise is madvise(2), whose outcome does not matter here: the advice
// only changes how fast pages are faulted in.
func madvise(start, n uintptr, advice int) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, n, uintptr(advice))
}
