package artifacts

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

// The helpers in this file define what a character is for the whole
// package: exactly what utf8.DecodeRune yields walking from the first byte
// of the log, a valid code point or one invalid byte.
//
// Two facts about that walk keep streaming and random access exact:
//   - every byte that is not a continuation byte (utf8.RuneStart) is a
//     place the walk lands on, because a valid sequence is one leading byte
//     followed only by continuation bytes and an invalid byte is consumed
//     alone;
//   - a sequence that needs bytes not yet seen is at most three bytes long
//     and starts at such a byte, so carrying those bytes forward decides it
//     exactly once the next bytes arrive (or the log ends).

const asciiMask = 0x8080808080808080

// runeCounter counts characters in a stream fed in arbitrary pieces, with
// the result utf8.RuneCount would give on the concatenation.
type runeCounter struct {
	chars int64             // characters decided so far
	carry [utf8.UTFMax]byte // trailing bytes that may still complete
	n     int               // len of carry, 0..3
}

// write counts p, carrying a trailing incomplete sequence into the next call.
func (rc *runeCounter) write(p []byte) {
	if rc.n > 0 {
		var tmp [2 * utf8.UTFMax]byte
		k := copy(tmp[:], rc.carry[:rc.n])
		m := copy(tmp[k:], p)
		b := tmp[:k+m]
		i := 0
		for i < k {
			if !utf8.FullRune(b[i:]) {
				// Still a proper prefix: all of p is in it.
				rc.n = copy(rc.carry[:], b[i:])
				return
			}
			_, size := utf8.DecodeRune(b[i:])
			rc.chars++
			i += size
		}
		p = p[i-k:]
		rc.n = 0
	}
	j := incompleteSuffix(p)
	rc.chars += int64(countRunes(p[:j]))
	rc.n = copy(rc.carry[:], p[j:])
}

// total is the character count if the stream ended now: each carried byte
// of an unfinished sequence is then one invalid character.
func (rc *runeCounter) total() int64 { return rc.chars + int64(rc.n) }

// countRunes returns utf8.RuneCount(p) in one pass shaped like
// utf8.Valid's: ASCII is skipped a word at a time, up to four words per
// step, and each other sequence is checked against the tables utf8 itself
// uses (leadInfo, secondRange), an invalid byte counting one character as
// utf8.DecodeRune makes it. (utf8.Valid followed by a count of the
// continuation bytes read the text twice: about twice the time on build
// logs, four times on ASCII.)
func countRunes(p []byte) int {
	p = p[:len(p):len(p)]
	n := 0
	for len(p) > 0 {
		p0 := p[0]
		if p0 < utf8.RuneSelf {
			p = p[1:]
			n++
			if len(p) > 8 && binary.LittleEndian.Uint64(p)&asciiMask == 0 {
				p = p[8:]
				n += 8
				for len(p) > 32 && (binary.LittleEndian.Uint64(p)|binary.LittleEndian.Uint64(p[8:])|
					binary.LittleEndian.Uint64(p[16:])|binary.LittleEndian.Uint64(p[24:]))&asciiMask == 0 {
					p = p[32:]
					n += 32
				}
			}
			continue
		}
		n++
		x := leadInfo[p0]
		r := secondRange[x>>4]
		switch x & 7 {
		case 2:
			if len(p) < 2 || p[1] < r.lo || r.hi < p[1] {
				p = p[1:]
				continue
			}
			p = p[2:]
		case 3:
			if len(p) < 3 || p[1] < r.lo || r.hi < p[1] || p[2] < 0x80 || 0xBF < p[2] {
				p = p[1:]
				continue
			}
			p = p[3:]
		case 4:
			if len(p) < 4 || p[1] < r.lo || r.hi < p[1] || p[2] < 0x80 || 0xBF < p[2] || p[3] < 0x80 || 0xBF < p[3] {
				p = p[1:]
				continue
			}
			p = p[4:]
		default:
			p = p[1:] // a byte that starts no sequence
		}
	}
	return n
}

// leadInfo describes each byte as the first of a sequence, as utf8's own
// table does: the low 3 bits are the sequence's length (0 for a byte that
// starts none), the high 4 bits index secondRange.
var leadInfo = func() (t [256]uint8) {
	for c := 0xC2; c <= 0xDF; c++ {
		t[c] = 2
	}
	for c := 0xE0; c <= 0xEF; c++ {
		t[c] = 3
	}
	t[0xE0] = 0x13
	t[0xED] = 0x23
	for c := 0xF0; c <= 0xF4; c++ {
		t[c] = 4
	}
	t[0xF0] = 0x34
	t[0xF4] = 0x44
	return t
}()

// secondRange is the range the second byte of a sequence must lie in: any
// continuation byte, or the narrower ranges after E0, ED, F0 and F4 that
// exclude overlong forms, surrogates and code points past U+10FFFF.
var secondRange = [5]struct{ lo, hi uint8 }{
	{0x80, 0xBF}, {0xA0, 0xBF}, {0x80, 0x9F}, {0x90, 0xBF}, {0x80, 0x8F},
}

// incompleteSuffix returns where a trailing sequence that more bytes could
// still complete starts in p, or len(p) when p ends on a decided character.
func incompleteSuffix(p []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(p); k++ {
		c := p[len(p)-k]
		if c < utf8.RuneSelf {
			return len(p)
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(p[len(p)-k:]) {
				return len(p) - k
			}
			return len(p)
		}
	}
	return len(p)
}

// takeRunes walks up to limit characters from the start of b, which must
// start on a character boundary, without passing budget bytes. atEOF says
// b ends where the log ends for good; otherwise the walk stops before a
// sequence b does not hold completely. It returns the bytes and characters
// taken and whether the budget (not the limit or the data) stopped it.
func takeRunes(b []byte, limit int64, budget int, atEOF bool) (nbytes int, nrunes int64, capped bool) {
	fast := min(budget, len(b))
	i := 0
	var n int64
	for n < limit && i < len(b) {
		if i+8 <= fast && n+8 <= limit && binary.LittleEndian.Uint64(b[i:])&asciiMask == 0 {
			i += 8
			n += 8
			continue
		}
		size := 1
		if b[i] >= utf8.RuneSelf {
			if !atEOF && !utf8.FullRune(b[i:]) {
				return i, n, false
			}
			_, size = utf8.DecodeRune(b[i:])
		}
		// b holds the whole character here, so only the budget can refuse it.
		if i+size > budget {
			return i, n, true
		}
		i += size
		n++
	}
	return i, n, false
}

// decodeText returns b as text, each invalid byte shown as U+FFFD. The text
// has exactly one rune per character of b.
func decodeText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/2)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String()
}

// firstBoundary returns the first position at or after x in b where the
// walk from the start of the log lands. b[:x] must hold the (up to three)
// bytes before x in the log, or x must be where the log starts.
func firstBoundary(b []byte, x int) int {
	for y := x; y < len(b); y++ {
		if isBoundary(b, y) {
			return y
		}
	}
	return len(b)
}

// isBoundary reports whether the walk lands on b[y]: either it is not a
// continuation byte, or no valid sequence starting in the three bytes before
// it reaches it.
func isBoundary(b []byte, y int) bool {
	if utf8.RuneStart(b[y]) {
		return true
	}
	for k := 1; k <= utf8.UTFMax-1 && y-k >= 0; k++ {
		if utf8.RuneStart(b[y-k]) {
			_, size := utf8.DecodeRune(b[y-k:])
			return size <= k
		}
	}
	return true
}
