package prefault

import (
	"syscall"
	"unsafe"
)

// madvPopulateRead is MADV_POPULATE_READ (linux/mman.h, since Linux 5.14):
// map the range's pages as reads would, faulting none in later.
const madvPopulateRead = 22

// text maps in the whole text segment of the executable: the mapping of
// /proc/self/maps that holds this function's code.
func text() {
	var buf [32 << 10]byte
	maps := readAll("/proc/self/maps", buf[:])
	f := text
	pc := **(**uintptr)(unsafe.Pointer(&f)) // a func value points at its entry
	if lo, hi, ok := mappingOf(maps, pc); ok {
		madvise(lo, hi-lo, madvPopulateRead)
	}
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
