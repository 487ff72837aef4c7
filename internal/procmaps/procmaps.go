// Package procmaps reads the text of /proc/self/maps: which mapping of the
// process holds an address. It imports nothing, so that package prefault,
// whose init must run among a binary's first, can use it as freely as the
// store does.
package procmaps

// Find returns the range of the mapping in maps, the text of
// /proc/self/maps, whose permissions field starts with perms ("r-x" for
// code, "r--" for read-only data, "rw-p" for private writable memory)
// and whose range holds addr.
func Find(maps []byte, addr uintptr, perms string) (lo, hi uintptr, ok bool) {
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
		if len(rest) < 1+len(perms) || rest[0] != ' ' || string(rest[1:1+len(perms)]) != perms {
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
