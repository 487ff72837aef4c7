package artifacts

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/bgcmd/bgcmd/internal/atomicfile"
)

// IndexSuffix is appended to a log's path to name its index: a capture
// writes Path+IndexSuffix beside Path, and a banked artifact's index is its
// path plus IndexSuffix.
const IndexSuffix = ".idx"

// The index file is a 32-byte header followed by fixed-size checkpoint
// records, appended while the log is written and never rewritten in place:
//
//	header: magic "bgcmdidx" | version u32 | stride u32 | record size u32 | 12 zero bytes
//	record: byte offset u64 | char offset u64 | line offset u64 | the 8 log bytes before the byte offset
//
// All integers are little-endian. Record k (k from 1) marks the character
// boundary at or just before byte k*stride: when a UTF-8 sequence that is
// still open straddles k*stride, the checkpoint sits where that sequence
// starts, at most three bytes earlier. A log of size S therefore has exactly
// floor(S/stride) records once it is final. The char offset counts the
// characters before the byte offset and the line offset the '\n' bytes
// before it. The copied bytes let a reader check a checkpoint against the
// log it claims to describe before trusting it.
const (
	indexMagic   = "bgcmdidx"
	indexVersion = 1
	headerSize   = 32
	recordSize   = 32
	prevLen      = 8
	minStride    = 16
	maxStride    = 1 << 20
)

// defaultStride is the distance between checkpoints, chosen by
// BenchmarkReadPageStride. A chars page scans about three strides (the one
// that checks the last checkpoint, the one after it, the one holding the
// offset) and a lines page the same with cheaper counting, so the page
// cost grows with the stride: on a 256 MiB log, about 50, 65, 77 and
// 112 µs per chars page at 8, 16, 32 and 64 KiB, of which some 40 µs is
// opening files and probing the index whatever the stride. Below 16 KiB the
// gain is small and the index doubles again; at 16 KiB it is 0.2% of the
// log (2 MiB per GiB) and the capture appends a record per 16 KiB.
const defaultStride = 16 << 10

// checkpoint is one index record: a character boundary in the log.
type checkpoint struct {
	pos   int64 // byte offset
	chars int64 // characters before pos
	lines int64 // '\n' bytes before pos
	prev  [prevLen]byte
}

// encodeHeader returns the index header for stride.
func encodeHeader(stride int64) []byte {
	h := make([]byte, headerSize)
	copy(h, indexMagic)
	binary.LittleEndian.PutUint32(h[8:], indexVersion)
	binary.LittleEndian.PutUint32(h[12:], uint32(stride))
	binary.LittleEndian.PutUint32(h[16:], recordSize)
	return h
}

// indexer follows a log as it is written, from its first byte, counting
// characters and lines and producing checkpoints. Capture, Summarize and the
// index rebuild share it, so a rebuilt index is identical to the one the
// capture wrote.
type indexer struct {
	stride int64
	rc     runeCounter
	pos    int64
	lines  int64
	next   int64
	last   [16]byte // the bytes just before pos
	recs   []byte   // encoded checkpoints not yet taken by the caller
}

func newIndexer(stride int64) *indexer {
	return &indexer{stride: stride, next: stride}
}

// write follows p, emitting a checkpoint at every multiple of the stride.
func (ix *indexer) write(p []byte) {
	for len(p) > 0 {
		k := ix.next - ix.pos
		if int64(len(p)) < k {
			ix.count(p)
			return
		}
		ix.count(p[:k])
		p = p[k:]
		ix.checkpoint()
		ix.next += ix.stride
	}
}

func (ix *indexer) count(p []byte) {
	ix.rc.write(p)
	ix.lines += int64(bytes.Count(p, newline))
	ix.pos += int64(len(p))
	if len(p) >= len(ix.last) {
		copy(ix.last[:], p[len(p)-len(ix.last):])
	} else {
		copy(ix.last[:], ix.last[len(p):])
		copy(ix.last[len(ix.last)-len(p):], p)
	}
}

// checkpoint records the boundary at pos, or at the start of the sequence
// still open there. The open bytes are never '\n', so the line count holds.
func (ix *indexer) checkpoint() {
	open := ix.rc.n
	var rec [recordSize]byte
	binary.LittleEndian.PutUint64(rec[0:], uint64(ix.pos-int64(open)))
	binary.LittleEndian.PutUint64(rec[8:], uint64(ix.rc.chars))
	binary.LittleEndian.PutUint64(rec[16:], uint64(ix.lines))
	end := len(ix.last) - open
	copy(rec[24:], ix.last[end-prevLen:end])
	ix.recs = append(ix.recs, rec[:]...)
}

// takeRecords returns the checkpoints encoded since the last call, and
// lets go of them.
func (ix *indexer) takeRecords() []byte {
	r := ix.recs
	ix.recs = nil
	return r
}

// pending returns the checkpoints encoded since the last clearPending,
// valid until the next write; clearPending forgets them and keeps their
// buffer for the next ones (a capture then allocates nothing per batch).
func (ix *indexer) pending() []byte { return ix.recs }

func (ix *indexer) clearPending() { ix.recs = ix.recs[:0] }

// summary returns the counts of everything written so far.
func (ix *indexer) summary() Summary {
	lines := ix.lines
	if ix.pos > 0 && ix.last[len(ix.last)-1] != '\n' {
		lines++
	}
	return Summary{Bytes: ix.pos, Chars: ix.rc.total(), Lines: lines}
}

var newline = []byte{'\n'}

// index reads checkpoints from an index file (or a rebuilt one in memory)
// with ReadAt, one record at a time; it never loads the file.
type index struct {
	r      io.ReaderAt
	stride int64
	n      int64 // records that describe the log as the reader sees it
	cache  map[int64]checkpoint
	// block holds the records from blockFrom of the last read of more than
	// a few at once (the search's final block), outside the map.
	block     []checkpoint
	blockFrom int64
}

func newIndex(r io.ReaderAt, stride, n int64) *index {
	return &index{r: r, stride: stride, n: n, cache: map[int64]checkpoint{}}
}

// cached returns record i if a read brought it.
func (ix *index) cached(i int64) (checkpoint, bool) {
	if k := i - ix.blockFrom; k >= 0 && k < int64(len(ix.block)) {
		return ix.block[k], true
	}
	c, ok := ix.cache[i]
	return c, ok
}

// loadIndex checks the header and size of an index of idxSize bytes against
// a log of logSize bytes. A final log must have exactly its records; a live
// one may have fewer (the capture appends them a little after the data) or
// more (written after the reader looked at the log's size), and the extra
// ones are ignored. Any mismatch is errStaleIndex.
func loadIndex(r io.ReaderAt, idxSize, logSize int64, final bool) (*index, error) {
	h := make([]byte, headerSize)
	if _, err := r.ReadAt(h, 0); err != nil {
		return nil, fmt.Errorf("%w: header: %v", errStaleIndex, err)
	}
	if string(h[:8]) != indexMagic || binary.LittleEndian.Uint32(h[8:]) != indexVersion ||
		binary.LittleEndian.Uint32(h[16:]) != recordSize {
		return nil, fmt.Errorf("%w: bad header", errStaleIndex)
	}
	stride := int64(binary.LittleEndian.Uint32(h[12:]))
	if stride < minStride || stride > maxStride {
		return nil, fmt.Errorf("%w: stride %d", errStaleIndex, stride)
	}
	body := idxSize - headerSize
	count := body / recordSize
	want := logSize / stride
	if final && (body%recordSize != 0 || count != want) {
		return nil, fmt.Errorf("%w: %d records for %d log bytes, want %d", errStaleIndex, count, logSize, want)
	}
	ix := newIndex(r, stride, min(count, want))
	if err := ix.load(ix.n-2, ix.n); err != nil {
		return nil, err
	}
	return ix, nil
}

// record returns record i (0-based: it marks (i+1)*stride), reading it
// unless an earlier read brought it.
func (ix *index) record(i int64) (checkpoint, error) {
	if c, ok := ix.cached(i); ok {
		return c, nil
	}
	if err := ix.load(i, i+1); err != nil {
		return checkpoint{}, err
	}
	c, _ := ix.cached(i)
	return c, nil
}

// load reads the records in [from, to), clipped to the index, with one
// ReadAt, sanity-checks them and keeps them for record.
func (ix *index) load(from, to int64) error {
	from, to = max(from, 0), min(to, ix.n)
	if from >= to {
		return nil
	}
	if k := from - ix.blockFrom; k >= 0 && to-ix.blockFrom <= int64(len(ix.block)) {
		return nil // the block holds them
	}
	var small [4 * recordSize]byte
	b := small[:]
	if to-from > 4 {
		b = make([]byte, (to-from)*recordSize)
	}
	b = b[:(to-from)*recordSize]
	if _, err := ix.r.ReadAt(b, headerSize+from*recordSize); err != nil {
		return fmt.Errorf("%w: records %d to %d: %v", errStaleIndex, from, to, err)
	}
	var block []checkpoint
	if to-from > 4 {
		block = make([]checkpoint, 0, to-from)
	}
	for i := from; i < to; i++ {
		c, err := ix.decode(i, b[(i-from)*recordSize:])
		if err != nil {
			return err
		}
		if block != nil {
			block = append(block, c)
		} else {
			ix.cache[i] = c
		}
	}
	if block != nil {
		ix.block, ix.blockFrom = block, from
	}
	return nil
}

// decode decodes and sanity-checks record i from b.
func (ix *index) decode(i int64, b []byte) (checkpoint, error) {
	c := checkpoint{
		pos:   int64(binary.LittleEndian.Uint64(b[0:])),
		chars: int64(binary.LittleEndian.Uint64(b[8:])),
		lines: int64(binary.LittleEndian.Uint64(b[16:])),
	}
	copy(c.prev[:], b[24:])
	nominal := (i + 1) * ix.stride
	if c.pos > nominal || c.pos < nominal-3 || c.chars < 0 || c.chars > c.pos ||
		c.chars*4 < c.pos || c.lines < 0 || c.lines > c.pos {
		return checkpoint{}, fmt.Errorf("%w: record %d out of range", errStaleIndex, i)
	}
	return c, nil
}

// byChars returns the index of the last record at or before character
// target, -1 for the origin.
func (ix *index) byChars(target int64) (int64, error) {
	return ix.search(func(c checkpoint) bool { return c.chars > target },
		func(c checkpoint) int64 { return c.chars }, target)
}

// byLines returns the index of the last record before the start of line
// target (so that the target-th '\n' lies after it), -1 for the origin.
func (ix *index) byLines(target int64) (int64, error) {
	return ix.search(func(c checkpoint) bool { return c.lines >= target },
		func(c checkpoint) int64 { return c.lines }, target)
}

// searchBlock is how many records the binary search reads at once when
// they are that few: 4 KiB of index.
const searchBlock = 128

// search binary-searches for the first record past the target and returns
// the index of the one before it (-1 when the first is already past). It
// checks that the two records really bracket the target.
//
// It first reads the block of records where the target would be if the
// log's characters (or lines) were spread evenly, as the last record's
// count says (measure is that count, target the position searched): on
// most logs the target is in that block and the search needs one read of
// the index instead of one per halving. A wrong guess only narrows the
// range the binary search then halves.
func (ix *index) search(past func(checkpoint) bool, measure func(checkpoint) int64, target int64) (int64, error) {
	lo, hi := int64(0), ix.n
	if last, ok := ix.cached(ix.n - 1); ok && ix.n > searchBlock && measure(last) > 0 {
		guess := int64(float64(ix.n) * float64(target) / float64(measure(last)))
		from := min(max(guess-searchBlock/2, 0), ix.n-searchBlock)
		if err := ix.load(from, from+searchBlock); err != nil {
			return 0, err
		}
		first, _ := ix.cached(from)
		end, _ := ix.cached(from + searchBlock - 1)
		switch {
		case past(first):
			hi = from
		case !past(end):
			lo = from + searchBlock
		default:
			lo, hi = from+1, from+searchBlock-1
		}
	}
	for lo < hi {
		if hi-lo <= searchBlock {
			if err := ix.load(lo-1, hi+1); err != nil {
				return 0, err
			}
		}
		mid := lo + (hi-lo)/2
		c, err := ix.record(mid)
		if err != nil {
			return 0, err
		}
		if past(c) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	for _, i := range []int64{lo - 1, lo} {
		if i < 0 || i >= ix.n {
			continue
		}
		c, err := ix.record(i)
		if err != nil {
			return 0, err
		}
		if past(c) != (i == lo) {
			return 0, fmt.Errorf("%w: records out of order at %d", errStaleIndex, i)
		}
	}
	return lo - 1, nil
}

// checkAll reads every record in order and checks its range, that the
// offsets and counts only grow, and the log bytes before it. It reads the
// whole index, a block at a time, but of the log only eight bytes per
// record.
func (ix *index) checkAll(log io.ReaderAt) error {
	const block = 4096
	buf := make([]byte, block*recordSize)
	var prev checkpoint
	for first := int64(0); first < ix.n; first += block {
		k := min(block, ix.n-first)
		if _, err := ix.r.ReadAt(buf[:k*recordSize], headerSize+first*recordSize); err != nil {
			return fmt.Errorf("%w: records: %v", errStaleIndex, err)
		}
		for j := int64(0); j < k; j++ {
			c, err := ix.decode(first+j, buf[j*recordSize:])
			if err != nil {
				return err
			}
			if c.chars < prev.chars || c.lines < prev.lines {
				return fmt.Errorf("%w: records out of order at %d", errStaleIndex, first+j)
			}
			if err := verifyCheckpoint(log, c); err != nil {
				return err
			}
			prev = c
		}
	}
	return nil
}

// verifyCheckpoint checks that the log holds, just before c, the bytes the
// index recorded there. Together with the count checks of view.segment it
// is what keeps a reader from trusting an index that describes another log.
// Damage that keeps every checkpoint consistent with its neighbours (the
// start of a log rewritten in place, say) only a scan from the start can
// see; Summarize, Bank without a summary and Store.Verify do that.
func verifyCheckpoint(log io.ReaderAt, c checkpoint) error {
	if c.pos == 0 {
		return nil
	}
	var b [prevLen]byte
	if _, err := log.ReadAt(b[:], c.pos-prevLen); err != nil {
		return fmt.Errorf("%w: checkpoint at %d: %v", errStaleIndex, c.pos, err)
	}
	if b != c.prev {
		return fmt.Errorf("%w: checkpoint at %d does not match the log", errStaleIndex, c.pos)
	}
	return nil
}

// memIndex wraps a header and encoded records built in memory.
func memIndex(stride int64, recs []byte) *index {
	b := append(encodeHeader(stride), recs...)
	return newIndex(bytes.NewReader(b), stride, int64(len(recs)/recordSize))
}

// writeIndexFile replaces path atomically with an index holding recs: it
// writes a temporary file beside it, syncs it, renames it over path and
// syncs the directory.
func writeIndexFile(path string, stride int64, recs []byte) error {
	if err := atomicfile.Write(path, append(encodeHeader(stride), recs...)); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	return nil
}
