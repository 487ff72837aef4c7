package artifacts

import (
	"bytes"
	"fmt"
)

// totals are a log's sizes in characters and lines as a view sees them.
type totals struct {
	// chars counts characters (only for a view that needs them); for a
	// live log it leaves out a trailing sequence that may still be
	// completed (its count is not settled).
	chars int64
	// lines counts lines, the last one even without its '\n'.
	lines int64
	// newlines counts the '\n' bytes: the lines that have ended.
	newlines int64
}

// maxLastSegment bounds what a reader of a live log accepts past the
// index's last record: as far as a capture's index trails its log while
// it is written flat out. That is the checkpoints the digester gathers
// before it appends them (one short of indexFlush's worth, and the stride
// begun after them), the batch it is hashing, the maxQueued batches
// waiting and the one the writer is filling: 3.5 MiB. Past that the
// capture's index has stopped (its write failed), and one rebuild serves
// better than reading more on every page. It is one figure, whatever
// stride the index's header claims: a capture writes at defaultStride, and
// a reader never reads a larger segment into memory because a header
// (which the job itself could have written) says so.
const maxLastSegment = int64(indexFlush/recordSize)*defaultStride + (maxQueued+2)*batchSize

// span returns checkpoint i (-1: the origin) and the log's bytes from it to
// checkpoint j, which must be a record of the index, with one read (the
// segment past the last record is read a chunk at a time: lastRecord,
// eachChunk). Before anything trusts the checkpoints it
// checks them against those bytes: the bytes recorded before each must be
// the log's, and the lines (and, for a view that counts characters, the
// characters) between two must be what their counts say. The bytes are
// valid until the next span.
func (v *view) span(ix *index, i, j int64) (checkpoint, []byte, error) {
	i = max(i, -1)
	var c checkpoint
	if i >= 0 {
		var err error
		if c, err = ix.record(i); err != nil {
			return checkpoint{}, nil, err
		}
	}
	if j >= ix.n {
		return checkpoint{}, nil, fmt.Errorf("span to record %d of %d: past the last record, read the log with eachChunk", j, ix.n)
	}
	cj, err := ix.record(j)
	if err != nil {
		return checkpoint{}, nil, err
	}
	end := cj.pos
	if end < c.pos {
		return checkpoint{}, nil, fmt.Errorf("%w: records %d and %d out of order", errStaleIndex, i, j)
	}
	from := max(0, c.pos-prevLen)
	buf := v.spanBuf(int(end - from))
	if err := v.readAt(buf, from); err != nil {
		return checkpoint{}, nil, err
	}
	if c.pos > 0 && !bytes.Equal(buf[:prevLen], c.prev[:]) {
		return checkpoint{}, nil, fmt.Errorf("%w: checkpoint at %d does not match the log", errStaleIndex, c.pos)
	}
	data := buf[c.pos-from:]
	prev := c
	for k := i + 1; k <= j && k < ix.n; k++ {
		next, err := ix.record(k)
		if err != nil {
			return checkpoint{}, nil, err
		}
		if next.pos-prev.pos < prevLen {
			return checkpoint{}, nil, fmt.Errorf("%w: records %d and %d too close", errStaleIndex, k-1, k)
		}
		seg := data[prev.pos-c.pos : next.pos-c.pos]
		ok := prev.lines+int64(bytes.Count(seg, newline)) == next.lines &&
			bytes.Equal(seg[len(seg)-prevLen:], next.prev[:])
		if ok && v.needChars {
			// next.pos is a character boundary, so bytes still open at the
			// end of seg are invalid ones: rc.total counts them right.
			var rc runeCounter
			rc.write(seg)
			ok = prev.chars+rc.total() == next.chars
		}
		if !ok {
			return checkpoint{}, nil, fmt.Errorf("%w: record %d does not match the log", errStaleIndex, k)
		}
		prev = next
	}
	return c, data, nil
}

// spanBuf returns the view's reusable span buffer with length n.
func (v *view) spanBuf(n int) []byte {
	if cap(v.span0) < n {
		v.span0 = v.take(n)
	}
	return v.span0[:n]
}

// totals counts from the last checkpoint to the end, after checking that
// checkpoint against the one before it.
func (v *view) totals() (totals, error) {
	ix, err := v.index()
	if err != nil {
		return totals{}, err
	}
	c, err := v.lastRecord(ix)
	if err != nil {
		return totals{}, err
	}
	t := totals{newlines: c.lines}
	rc := runeCounter{chars: c.chars}
	last := c.prev[prevLen-1]
	err = v.eachChunk(c.pos, func(b []byte) bool {
		t.newlines += int64(bytes.Count(b, newline))
		if v.needChars {
			rc.write(b)
		}
		last = b[len(b)-1]
		return true
	})
	if err != nil {
		return totals{}, err
	}
	if v.needChars {
		t.chars = rc.chars
		if v.final {
			t.chars = rc.total()
		}
	}
	t.lines = t.newlines
	if v.size > 0 && last != '\n' {
		t.lines++
	}
	return t, nil
}

// charStart returns the byte offset where character target starts. The
// caller makes sure target is below the view's character total.
func (v *view) charStart(target int64) (int64, error) {
	ix, err := v.index()
	if err != nil {
		return 0, err
	}
	i, err := ix.byChars(target)
	if err != nil {
		return 0, err
	}
	if i == ix.n-1 {
		// Past the last record: a live log's trailing segment, read a
		// chunk at a time.
		c, err := v.lastRecord(ix)
		if err != nil {
			return 0, err
		}
		return v.charAfter(c, target-c.chars)
	}
	c, b, err := v.span(ix, i, i+1)
	if err != nil {
		return 0, err
	}
	need := target - c.chars
	k, n, _ := takeRunes(b, need, len(b), v.final && c.pos+int64(len(b)) == v.size)
	if n < need {
		return 0, fmt.Errorf("%w: character %d is not where the index puts it", errStaleIndex, target)
	}
	return c.pos + int64(k), nil
}

// lineStart returns the byte offset where line target starts: just after
// the target-th '\n'. The caller makes sure that '\n' exists.
func (v *view) lineStart(target int64) (int64, error) {
	if target == 0 {
		return 0, nil
	}
	ix, err := v.index()
	if err != nil {
		return 0, err
	}
	i, err := ix.byLines(target)
	if err != nil {
		return 0, err
	}
	if i == ix.n-1 {
		c, err := v.lastRecord(ix)
		if err != nil {
			return 0, err
		}
		return v.lineAfter(c, target-c.lines)
	}
	c, b, err := v.span(ix, i, i+1)
	if err != nil {
		return 0, err
	}
	off := 0
	for need := target - c.lines; need > 0; need-- {
		j := bytes.IndexByte(b[off:], '\n')
		if j < 0 {
			return 0, fmt.Errorf("%w: line %d is not where the index puts it", errStaleIndex, target)
		}
		off += j + 1
	}
	return c.pos + int64(off), nil
}
