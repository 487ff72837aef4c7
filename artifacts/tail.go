package artifacts

import (
	"bytes"
	"unicode/utf8"
)

// tailPage serves the last n lines, reading backwards from the end of the
// log: at most MaxPageBytes and a few bytes.
func (v *view) tailPage(n int64, raw bool) (*Result, error) {
	t, err := v.totals()
	if err != nil {
		return nil, err
	}
	next := t.lines
	if !v.final {
		next = t.newlines // an unfinished last line is shown but not passed
	}
	if v.size == 0 {
		return v.empty(UnitLines, 0, 0, raw), nil
	}
	start, k, capped, err := v.tailStart(n)
	if err != nil {
		return nil, err
	}
	page := make([]byte, v.size-start)
	if err := v.readAt(page, start); err != nil {
		return nil, err
	}
	if !raw && !v.final {
		page = page[:incompleteSuffix(page)]
	}
	res := &Result{
		Unit: UnitLines, Offset: t.lines - k, NextOffset: next, TotalSize: t.lines,
		LimitCapped: capped,
	}
	return v.finish(res, page, raw), nil
}

// tailStart finds where the last n lines of a non-empty log start and how
// many lines that is, keeping within MaxPageBytes: when the lines do not
// fit it takes as many whole lines as do (capped), and when not even the
// last line fits it starts at the character boundary that keeps
// MaxPageBytes of it.
func (v *view) tailStart(n int64) (start, lines int64, capped bool, err error) {
	var lastb [1]byte
	if err := v.readAt(lastb[:], v.size-1); err != nil {
		return 0, 0, false, err
	}
	// The last line's own '\n' does not start a line.
	searchEnd := v.size
	if lastb[0] == '\n' {
		searchEnd--
	}
	// A '\n' at q starts a line at q+1; it fits if v.size-(q+1) <= MaxPageBytes.
	lo := max(0, v.size-MaxPageBytes-1)
	var found int64
	buf := v.scratch()
	for hi := searchEnd; hi > lo; {
		from := max(lo, hi-int64(len(buf)))
		b := buf[:hi-from]
		if err := v.readAt(b, from); err != nil {
			return 0, 0, false, err
		}
		for {
			i := bytes.LastIndexByte(b, '\n')
			if i < 0 {
				break
			}
			found++
			start = from + int64(i) + 1
			if found == n {
				return start, n, false, nil
			}
			b = b[:i]
		}
		hi = from
	}
	if v.size <= MaxPageBytes {
		return 0, found + 1, false, nil // the whole log holds fewer lines
	}
	if found > 0 {
		return start, found, true, nil
	}
	cut := v.size - MaxPageBytes
	from := max(0, cut-(utf8.UTFMax-1))
	b := make([]byte, min(v.size, cut+utf8.UTFMax)-from)
	if err := v.readAt(b, from); err != nil {
		return 0, 0, false, err
	}
	return from + int64(firstBoundary(b, int(cut-from))), 1, true, nil
}
