package artifacts

import (
	"bytes"
	"fmt"
)

// The segment of a live log past its index's last record is as long as
// the capture's index trails it: up to maxLastSegment. It is read a chunk
// at a time into the view's scan buffer, never into one buffer of its
// size, so a page of a log being written flat out costs no fresh memory
// for it (a CLI process pays a page fault for each new page it touches).

// lastRecord returns the index's last checkpoint (the origin when it has
// none), checked against the one before it and the log's bytes. A live
// log more than maxLastSegment past it has a stale index.
func (v *view) lastRecord(ix *index) (checkpoint, error) {
	var c checkpoint
	if ix.n > 0 {
		if _, _, err := v.span(ix, ix.n-2, ix.n-1); err != nil {
			return checkpoint{}, err
		}
		var err error
		if c, err = ix.record(ix.n - 1); err != nil {
			return checkpoint{}, err
		}
	}
	if c.pos > v.size {
		return checkpoint{}, fmt.Errorf("%w: the last record is past the log's end", errStaleIndex)
	}
	if !v.final && v.size-c.pos > maxLastSegment {
		return checkpoint{}, fmt.Errorf("%w: %d bytes past the last record", errStaleIndex, v.size-c.pos)
	}
	return c, nil
}

// eachChunk hands fn the log from pos to its end, as the view sees it, a
// chunk at a time, until fn returns false. The chunk is valid until fn
// returns.
func (v *view) eachChunk(pos int64, fn func(b []byte) bool) error {
	buf := v.scratch()
	for pos < v.size {
		b := buf[:min(int64(len(buf)), v.size-pos)]
		if err := v.readAt(b, pos); err != nil {
			return err
		}
		if !fn(b) {
			return nil
		}
		pos += int64(len(b))
	}
	return nil
}

// lineAfter returns the offset just after the need-th '\n' from the
// checkpoint c, reading from c on.
func (v *view) lineAfter(c checkpoint, need int64) (int64, error) {
	pos := c.pos
	err := v.eachChunk(c.pos, func(b []byte) bool {
		if k := int64(bytes.Count(b, newline)); k < need {
			// Counting a chunk's lines is cheaper than finding each.
			pos += int64(len(b))
			need -= k
			return true
		}
		for need > 0 {
			j := bytes.IndexByte(b, '\n')
			pos += int64(j + 1)
			b = b[j+1:]
			need--
		}
		return false
	})
	if err != nil {
		return 0, err
	}
	if need > 0 {
		return 0, fmt.Errorf("%w: line %d is not where the index puts it", errStaleIndex, c.lines+need)
	}
	return pos, nil
}

// charAfter returns the offset where the character need characters after
// the checkpoint c starts, reading from c on.
func (v *view) charAfter(c checkpoint, need int64) (int64, error) {
	target := c.chars + need
	buf := v.scratch()
	pos := c.pos
	for need > 0 {
		b := buf[:min(int64(len(buf)), v.size-pos)]
		if err := v.readAt(b, pos); err != nil {
			return 0, err
		}
		k, n, _ := takeRunes(b, need, len(b), v.final && pos+int64(len(b)) == v.size)
		if k == 0 {
			return 0, fmt.Errorf("%w: character %d is not where the index puts it", errStaleIndex, target)
		}
		pos += int64(k)
		need -= n
	}
	return pos, nil
}
