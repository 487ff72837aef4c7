package artifacts

import (
	"bytes"
	"slices"
	"unicode/utf8"
)

// bytesPage serves limit bytes from offset o. It needs no index. A text
// page never starts inside a UTF-8 sequence either: an o that falls inside
// one starts the page at the next character (the Offset it reports).
func (v *view) bytesPage(o, limit int64, raw bool) (*Result, error) {
	if o >= v.size {
		return v.empty(UnitBytes, o, v.size, raw), nil
	}
	if !raw {
		var err error
		if o, err = v.charBoundary(o); err != nil {
			return nil, err
		}
	}
	res := &Result{Unit: UnitBytes, Offset: o, TotalSize: v.size}
	if limit > MaxPageBytes {
		limit = MaxPageBytes
		res.LimitCapped = o+limit < v.size
	}
	end := min(v.size, o+limit)
	page := v.take(int(end - o))
	if err := v.readAt(page, o); err != nil {
		return nil, err
	}
	if !raw {
		var err error
		if page, err = v.wholeChars(page, o, end); err != nil {
			return nil, err
		}
	}
	res.NextOffset = o + int64(len(page))
	return v.finish(res, page, raw), nil
}

// charBoundary returns o, or, when o falls inside a valid UTF-8 sequence,
// the offset just past that sequence.
func (v *view) charBoundary(o int64) (int64, error) {
	from := max(0, o-(utf8.UTFMax-1))
	b := make([]byte, min(v.size, o+utf8.UTFMax-1)-from)
	if err := v.readAt(b, from); err != nil {
		return 0, err
	}
	for i := int(o - from - 1); i >= 0; i-- {
		if !utf8.RuneStart(b[i]) {
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || n > 1 {
			if end := from + int64(i+n); end > o {
				return end, nil
			}
		}
		break
	}
	return o, nil
}

// wholeChars trims a text page [o, end) so that it does not end inside a
// UTF-8 sequence: one the log completes after end, or, in a live log, one
// at its end that may still be completed. A page that would be left empty
// by a sequence the log completes is extended over it instead.
func (v *view) wholeChars(page []byte, o, end int64) ([]byte, error) {
	j := incompleteSuffix(page)
	if j == len(page) {
		return page, nil
	}
	seq := append([]byte(nil), page[j:]...)
	if end < v.size {
		more := make([]byte, min(int64(utf8.UTFMax-1), v.size-end))
		if err := v.readAt(more, end); err != nil {
			return nil, err
		}
		seq = append(seq, more...)
	}
	if !utf8.FullRune(seq) {
		// The log ends inside the sequence: for good (its bytes are
		// invalid characters) or for now.
		if v.final {
			return page, nil
		}
		return page[:j], nil
	}
	_, size := utf8.DecodeRune(seq)
	if size <= len(page)-j {
		return page, nil // invalid bytes, nothing split
	}
	if j > 0 {
		return page[:j], nil
	}
	whole := make([]byte, size)
	if err := v.readAt(whole, o); err != nil {
		return nil, err
	}
	return whole, nil
}

// charsPage serves limit characters from character o.
func (v *view) charsPage(o, limit int64, raw bool) (*Result, error) {
	t, err := v.totals()
	if err != nil {
		return nil, err
	}
	if o >= t.chars {
		return v.empty(UnitChars, o, t.chars, raw), nil
	}
	start, err := v.charStart(o)
	if err != nil {
		return nil, err
	}
	// limit characters span at most 4*limit bytes; the slack lets the walk
	// see a whole character at the budget's edge.
	window := int64(MaxPageBytes)
	if limit < MaxPageBytes/utf8.UTFMax {
		window = limit * utf8.UTFMax
	}
	end := min(v.size, start+window+utf8.UTFMax)
	buf := v.take(int(end - start))
	if err := v.readAt(buf, start); err != nil {
		return nil, err
	}
	k, n, capped := takeRunes(buf, limit, MaxPageBytes, v.final && end == v.size)
	res := &Result{
		Unit: UnitChars, Offset: o, NextOffset: o + n, TotalSize: t.chars,
		LimitCapped: capped,
	}
	return v.finish(res, buf[:k], raw), nil
}

// linesPage serves limit lines from line o.
func (v *view) linesPage(o, limit int64, raw bool) (*Result, error) {
	t, err := v.totals()
	if err != nil {
		return nil, err
	}
	avail := t.lines
	if !v.final {
		avail = t.newlines
	}
	if o >= avail {
		return v.empty(UnitLines, o, t.lines, raw), nil
	}
	start, err := v.lineStart(o)
	if err != nil {
		return nil, err
	}
	// Read on until limit lines, MaxPageBytes or the end, doubling the
	// read each time: a page costs about what it holds.
	res := &Result{Unit: UnitLines, Offset: o, TotalSize: t.lines}
	buf := v.take(0)
	off, n := 0, int64(0)
	end := start
	for want := int64(16 << 10); n < limit && end < v.size && end-start < MaxPageBytes; want *= 2 {
		next := min(v.size, start+MaxPageBytes, end+want)
		buf = slices.Grow(buf, int(next-end))[:next-start]
		if err := v.readAt(buf[end-start:], end); err != nil {
			return nil, err
		}
		end = next
		for n < limit {
			i := bytes.IndexByte(buf[off:], '\n')
			if i < 0 {
				break
			}
			off += i + 1
			n++
		}
	}
	switch {
	case n == limit:
	case end == v.size:
		// The rest of the log is in buf; a final log's last line counts
		// without its '\n'.
		if v.final && off < len(buf) {
			off = len(buf)
			n++
		}
	case n > 0:
		res.LimitCapped = true
	default:
		// Line o alone is longer than a page: show its start.
		off = incompleteSuffix(buf)
		n = 1
		res.LimitCapped = true
	}
	res.NextOffset = o + n
	return v.finish(res, buf[:off], raw), nil
}
