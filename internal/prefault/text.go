package prefault

import (
	"syscall"
	"unsafe"

	"github.com/bgcmd/bgcmd/internal/procmaps"
)

// madvPopulateRead is MADV_POPULATE_READ (linux/mman.h, since Linux 5.14):
// map the range's pages as reads would, faulting none in later.
const madvPopulateRead = 22

// madvWillNeed is MADV_WILLNEED: read the range's file pages ahead, into
// the page cache, without waiting for them.
const madvWillNeed = 3

// pageSize is the base page size of amd64 and arm64 Linux, the unit of
// mincore(2)'s answer.
const pageSize = 4 << 10

// text maps in the whole text segment of the executable (the mapping of
// /proc/self/maps that holds this function's code) and its read-only data
// segment (the one that holds this package's string constants, and with
// them the function table the runtime reads to walk a stack) when the page
// cache already holds them, as it does for a binary that runs often. A
// binary read cold from disk (after a reboot, say) is left to fault in what
// it runs, since mapping it all would first read all of it; its segments
// are read ahead in the background instead (MADV_WILLNEED), so that the
// next process finds them cached.
//
// The read-only data is mostly the function table (pclntab), which the
// runtime reads wherever it walks a stack: at each growth of a goroutine's
// stack, and at a panic or a profile. A short process faulted it in some
// 30 to 45 times (the kernel maps up to 16 cached pages around each fault),
// most of them in stack growth.
func text() {
	var buf [32 << 10]byte
	for _, s := range segments(readAll("/proc/self/maps", buf[:])) {
		populate(s)
	}
}

// A segment is a mapping of the executable: lo to hi, when ok.
type segment struct {
	lo, hi uintptr
	ok     bool
}

// segments finds in maps, the text of /proc/self/maps, the executable's
// text segment (the mapping that holds this package's code) and its
// read-only data segment (the one that holds this package's constants).
func segments(maps []byte) [2]segment {
	f := text
	code := **(**uintptr)(unsafe.Pointer(&f)) // a func value points at its entry
	data := uintptr(unsafe.Pointer(unsafe.StringData(rodataMark)))
	var s [2]segment
	s[0].lo, s[0].hi, s[0].ok = procmaps.Find(maps, code, "r-x")
	s[1].lo, s[1].hi, s[1].ok = procmaps.Find(maps, data, "r--")
	return s
}

// rodataMark is a string constant: its bytes lie in the executable's
// read-only data segment.
const rodataMark = "bgcmd prefault"

// populate maps in the pages of the segment s when the page cache holds
// them, and starts reading them ahead when it does not.
func populate(s segment) {
	if !s.ok {
		return
	}
	switch resident, ok := sampleResidency(s.lo, s.hi); {
	case !ok:
	case mostlyCached(resident[:]):
		madvise(s.lo, s.hi-s.lo, madvPopulateRead)
	default:
		madvise(s.lo, s.hi-s.lo, madvWillNeed)
	}
}

// The residency of a text is sampled: sampleWindows runs of samplePages
// pages spread evenly through it. mincore(2) of a whole text of 11 MB took
// 0.3 ms here, about as long as mapping it all in.
const (
	sampleWindows = 8
	samplePages   = 8
)

// sampleResidency asks mincore(2) which of the sampled pages of the page-
// aligned range [lo, hi) are in the page cache; ok is false when the
// range is smaller than the sample or the kernel refuses.
func sampleResidency(lo, hi uintptr) (vec [sampleWindows * samplePages]byte, ok bool) {
	pages := (hi - lo) / pageSize
	if pages < sampleWindows*samplePages {
		return vec, false
	}
	step := pages / sampleWindows * pageSize
	for i := range sampleWindows {
		_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, lo+uintptr(i)*step, samplePages*pageSize,
			uintptr(unsafe.Pointer(&vec[i*samplePages])))
		if errno != 0 {
			return vec, false
		}
	}
	return vec, true
}

// mostlyCached says whether at least 90% of the pages mincore(2) describes
// in vec (bit 0 of each byte) are in the page cache.
func mostlyCached(vec []byte) bool {
	in := 0
	for _, b := range vec {
		in += int(b & 1)
	}
	return len(vec) > 0 && in*10 >= len(vec)*9
}

// readAll reads the file at path into buf, as much of it as buf holds; a
// file it cannot read is empty.
func readAll(path string, buf []byte) []byte {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	return buf[:n]
}
