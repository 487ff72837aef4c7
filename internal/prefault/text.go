package prefault

import (
	"syscall"
	"unsafe"
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
// /proc/self/maps that holds this function's code) when the page cache
// already holds it, as it does for a binary that runs often. A binary
// read cold from disk (after a reboot, say) is left to fault in what it
// runs, since mapping it all would first read all of it; its text is read
// ahead in the background instead (MADV_WILLNEED), so that the next
// process finds it cached.
func text() {
	lo, hi, ok := textMapping()
	if !ok {
		return
	}
	switch resident, ok := sampleResidency(lo, hi); {
	case !ok:
	case mostlyCached(resident[:]):
		madvise(lo, hi-lo, madvPopulateRead)
	default:
		madvise(lo, hi-lo, madvWillNeed)
	}
}

// textMapping returns the range of the executable mapping of
// /proc/self/maps that holds this package's code: the text segment.
func textMapping() (lo, hi uintptr, ok bool) {
	var buf [32 << 10]byte
	maps := readAll("/proc/self/maps", buf[:])
	f := textMapping
	pc := **(**uintptr)(unsafe.Pointer(&f)) // a func value points at its entry
	return mappingOf(maps, pc)
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

// mappingOf finds, in the text of /proc/self/maps, the executable mapping
// ("r-x") whose range holds addr.
func mappingOf(maps []byte, addr uintptr) (lo, hi uintptr, ok bool) {
	for len(maps) > 0 {
		line := maps
		if i := indexByte(maps, '\n'); i >= 0 {
			line, maps = maps[:i], maps[i+1:]
		} else {
			maps = nil
		}
		// "lo-hi perms offset dev inode path"
		lo, rest := hexPrefix(line)
		if len(rest) == 0 || rest[0] != '-' {
			continue
		}
		hi, rest = hexPrefix(rest[1:])
		if len(rest) < 4 || rest[0] != ' ' || string(rest[1:4]) != "r-x" {
			continue
		}
		if lo <= addr && addr < hi {
			return lo, hi, true
		}
	}
	return 0, 0, false
}

// hexPrefix parses the lowercase hexadecimal number b starts with.
func hexPrefix(b []byte) (v uintptr, rest []byte) {
	i := 0
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		default:
			return v, b[i:]
		}
	}
	return v, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}
