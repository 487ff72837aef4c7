// Package prefault maps in, while a bgcmd process initialises, pages that
// the process would otherwise fault in one at a time. It is imported by
// the main packages of bgcmd and bgcmd-supervisor for its init alone, and
// imports nothing but the system call package and internal/procmaps
// (which imports nothing), so its init runs among the binary's first (about
// the 15th of 143 packages; one importing golang.org/x/sys/unix waited
// until about the 75th, after most of the heap's early pages).
//
// A short bgcmd process (a `bgcmd run`, the detached supervisor it starts)
// spends much of its start-up in page faults: on a virtual machine each
// first touch of a 4 KiB page can cost tens of microseconds, and such a
// process touches several hundred of them. Two kinds are taken in bulk:
//
//   - the heap (heap.go): where the system leaves huge pages to each
//     process (transparent_hugepage "madvise", the common default), the
//     2 MiB around the heap's first objects become one huge page at once;
//   - the executable's code and read-only data (text.go): one
//     madvise(MADV_POPULATE_READ) each maps every page of the text segment
//     and of the read-only data segment (constants, type data and the
//     function table the runtime reads to walk a stack) where the process
//     would fault in the parts it touches, 64 KiB at a time. Only when the
//     page cache holds the segment (a sample of its pages says so): a
//     binary read cold is read ahead for the next process instead, not
//     read whole first.
//
// On `bgcmd version` here the early init took 510 page faults down to 452,
// and the text's mapping down to 356 (15.3 ms of CPU, then 13.4, then
// 12.2). Mapping the read-only data too took a detached supervisor's
// faults in its function table from 45 to 17 (most of those left come
// before this package's init: the runtime's start and the first inits read
// the table) and a whole `bgcmd run -- /bin/true`, both processes, from
// 57.4 to 54.8 ms of CPU (30 groups of 10 runs each, in turn). Where the
// kernel lacks a request (MADV_COLLAPSE, MADV_POPULATE_READ) or huge pages
// are off, the request fails and nothing changes.
//
// What it costs: the heap's huge page may hold memory the process never
// uses, at most the rest of those 2 MiB. The segments' pages are the page
// cache's, shared with every process running the binary; they count in
// the process's resident set (VmRSS) all the same, about 12 MB of bgcmd's
// (6 MB of text, 6 of read-only data).
package prefault

func init() {
	heap()
	text()
}
