// Package prefault maps in, while a bgcmd process initialises, pages that
// the process would otherwise fault in one at a time. It is imported by
// the main packages of bgcmd and bgcmd-supervisor for its init alone, and imports nothing but the
// system call package, so its init runs among the binary's first (about
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
//   - the executable's code (text.go): one madvise(MADV_POPULATE_READ)
//     maps every page of the text segment where the process would fault in
//     the parts it runs, 64 KiB at a time. Only when the page cache holds
//     the text (a sample of its pages says so): a binary read cold is
//     read ahead for the next process instead, not read whole first.
//
// On `bgcmd version` here the early init took 510 page faults down to 452,
// and the text's mapping down to 356 (15.3 ms of CPU, then 13.4, then
// 12.2). Where the kernel lacks a
// request (MADV_COLLAPSE, MADV_POPULATE_READ) or huge pages are off, the
// request fails and nothing changes.
//
// What it costs: the heap's huge page may hold memory the process never
// uses, at most the rest of those 2 MiB. The text's pages are the page
// cache's, shared with every process running the binary; they count in
// the process's resident set (VmRSS) all the same, about 11 MB of bgcmd's.
package prefault

func init() {
	heap()
	text()
}
