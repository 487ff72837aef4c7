// Package hugeheap backs the start of a bgcmd process's Go heap with a
// transparent huge page. It is imported by bgcmd's main package for its
// init alone, and imports nothing but the system call package, so its init
// runs among the binary's first.
//
// A short bgcmd process (a `bgcmd run`, the detached supervisor it starts)
// spends much of its start-up in page faults: on a virtual machine each
// first touch of a 4 KiB page of the heap costs tens of microseconds, and
// such a process touches a few hundred of them. Where the system leaves
// huge pages to each process (transparent_hugepage "madvise", the common
// default), this asks for them on the heap's mapped part and collapses the
// 2 MiB around the heap's first objects into one huge page at once: the
// pages the runtime already touched are copied into it and the rest of it
// needs no fault at all. The cost is memory the process may not use, at
// most the rest of that 2 MiB. Where huge pages are off, or the kernel
// predates MADV_COLLAPSE, both requests fail and nothing changes.
package hugeheap

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
// architecture. They are spelled out here rather than taken from
// golang.org/x/sys/unix: a package's init runs once every package it
// imports has been initialised, and unix comes late among the binary's
// packages (about the 75th of 143), by when most of the heap's early pages
// have been faulted in one by one.
const (
	madvHugePage = 14
	madvCollapse = 25
)

// first is a heap object allocated at init: its page lies where the heap
// starts.
var first *[64]byte

func init() {
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
