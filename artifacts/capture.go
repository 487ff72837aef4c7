package artifacts

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// DefaultTailSize is how many trailing bytes a Capture keeps in memory for
// Tail when CaptureOptions.TailSize is 0.
const DefaultTailSize = 8 << 10

// CaptureOptions configures a Capture. Zero values take the defaults.
type CaptureOptions struct {
	// Path is the log file to create. It must not exist yet (a capture never
	// overwrites output) and its directory must exist. The log is created at
	// the first byte written and its index, beside it as Path+IndexSuffix,
	// at the first checkpoint: a stream that stays empty costs no file, and
	// a log shorter than one stride needs no index (readers scan it).
	Path string
	// Cap is the most bytes the log may hold; 0 means no limit.
	Cap int64
	// TailSize is how many of the last bytes Tail keeps; 0 means
	// DefaultTailSize.
	TailSize int
}

// Capture writes one output stream to its log file as it arrives and keeps
// the facts about it: the sha256, character and line counts, the index of
// checkpoints and the last TailSize bytes, in memory bounded whatever the
// output's size.
//
// Each Write reaches the log file before it returns, so a reader of the live
// log sees it at once. Hashing, counting and indexing run in a background
// goroutine, in order, so they cost the writer little: on a copy of what
// Write is given, or on the very buffers ReadFrom reads into. Summary and
// Close wait for them. Memory stays bounded: a writer far ahead of the
// background work waits for it.
//
// A Capture is safe for concurrent use; Written never blocks. Close must be
// called once the stream ends.
type Capture struct {
	path    string
	cap     int64
	written atomic.Int64

	mu    sync.Mutex // serialises Write, ReadFrom's writes, Tail, Summary and Close
	f     *os.File
	tail  ring   // the last bytes handed to dg; Tail adds those still pending
	batch []byte // bytes written but not yet handed to dg
	// held is the batch a ReadFrom reads into, outside mu, past its
	// len: its bytes are written but not yet handed to dg, as batch's.
	// Any other writer, Summary or Close while it reads hands them over
	// (a copy) and sets heldTaken, so that order is kept.
	held      []byte
	heldTaken bool
	dg        *digester
	flushed   int64 // how much of the log startWriteback has been given
	dropped   int64 // how much of the log dropWritten has been given
	capped    bool
	closed    bool
	err       error   // the first write error, returned by every later Write
	final     Summary // set by Close
}

// NewCapture returns a Capture for the log at opts.Path. It creates no file:
// the log appears at the first byte written and its index at the first
// checkpoint (see CaptureOptions.Path). It fails with an error wrapping
// os.ErrExist when opts.Path exists already, and when its directory does
// not exist.
func NewCapture(opts CaptureOptions) (*Capture, error) {
	return newCapture(opts, defaultStride)
}

func newCapture(opts CaptureOptions, stride int64) (*Capture, error) {
	switch {
	case opts.Path == "":
		return nil, errors.New("new capture: empty path")
	case opts.Cap < 0:
		return nil, fmt.Errorf("new capture: negative cap %d", opts.Cap)
	case opts.TailSize < 0:
		return nil, fmt.Errorf("new capture: negative tail size %d", opts.TailSize)
	}
	tailSize := opts.TailSize
	if tailSize == 0 {
		tailSize = DefaultTailSize
	}
	if _, err := os.Lstat(opts.Path); err == nil {
		return nil, fmt.Errorf("new capture: %s: %w", opts.Path, os.ErrExist)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("new capture: %w", err)
	}
	if fi, err := os.Stat(filepath.Dir(opts.Path)); err != nil {
		return nil, fmt.Errorf("new capture: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("new capture: %s is not a directory", filepath.Dir(opts.Path))
	}
	return &Capture{
		path: opts.Path,
		cap:  opts.Cap,
		tail: ring{buf: make([]byte, tailSize)},
		dg:   newDigester(opts.Path+IndexSuffix, stride),
	}, nil
}

// open creates the log at the first byte (never over an existing file).
func (c *Capture) open() error {
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create log: %w", err)
	}
	c.f = f
	return nil
}

// writebackEvery is how many bytes of log a capture lets accumulate
// before it starts their writeback to disk (so that the fsync at Close has
// only the tail left to flush). Each time it does, it also lets go of the
// page cache of the window before, whose writeback started a window ago
// (dropWritten): a long log then cycles through two windows of cache
// instead of taking a fresh page for every page it writes, which keeps
// the output of a job from pushing the rest of the machine's files out of
// the cache, and is far cheaper where fresh memory is dear. In a virtual
// machine that hands free memory back to its host, the kernel backs a new
// large page-cache folio with memory the host must fault in again: writing
// a GiB in 1 MiB writes took 1.5 to 1.8 s of CPU that way, against 0.3 to
// 0.5 s when the writer's own pages were recycled. Readers of the live log
// are unaffected, except that what lies more than two windows before its
// end is read from disk, not memory.
//
// The writer makes both calls, right after the write that completes a
// window, not the digester: the digester is what a fast writer waits for
// (sha256 alone takes most of a core at a pipe's pace), and the two calls,
// some 0.1 s per GiB of log, made it wait that much longer: a GiB in 1 MiB
// writes went from about 89% to about 98% of the speed of a plain copy
// hashed beside it, which makes the calls on its writer (three runs each,
// in turn). On the writer they cost what they cost any program that writes
// a file this way.
const writebackEvery = 8 << 20

// writeback starts the writeback of the log's complete windows and drops
// the cache of the window before them (see writebackEvery). Call with mu
// held, after a write.
func (c *Capture) writeback() {
	done := c.written.Load()
	if done-c.flushed < writebackEvery {
		return
	}
	startWriteback(c.f, c.flushed, done-c.flushed)
	dropWritten(c.f, c.dropped, c.flushed-c.dropped)
	c.dropped, c.flushed = c.flushed, done
}

// Write appends p to the log. With a cap it writes exactly
// min(len(p), bytes left) bytes; when that drops any of p it returns the
// short count and ErrCapReached, and every later Write returns 0 and
// ErrCapReached. Output of exactly the cap's size is not capped. After a
// write error, or after Close, every Write fails.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.takeHeld()
	n, err := c.writeLog(p)
	c.account(p[:n])
	return n, err
}

// writeLog writes p to the log under the rules of Write, and returns how
// many of its bytes the log took; the caller accounts for them.
func (c *Capture) writeLog(p []byte) (int, error) {
	switch {
	case c.closed:
		return 0, fmt.Errorf("write %s: %w", c.path, os.ErrClosed)
	case c.err != nil:
		return 0, c.err
	case c.capped:
		return 0, ErrCapReached
	}
	want := p
	if c.cap > 0 {
		if left := c.cap - c.written.Load(); int64(len(p)) > left {
			want = p[:left]
		}
	}
	n := 0
	if len(want) > 0 && c.f == nil {
		if err := c.open(); err != nil {
			c.err = err
			return 0, err
		}
	}
	if len(want) > 0 {
		var err error
		n, err = c.f.Write(want)
		c.written.Add(int64(n))
		if err != nil {
			c.err = err // *fs.PathError: names the log already
			return n, c.err
		}
		c.writeback()
	}
	if len(want) < len(p) {
		c.capped = true
		return n, ErrCapReached
	}
	return n, nil
}

// account copies p, just written to the log, into the batch for the
// digester.
func (c *Capture) account(p []byte) {
	for len(p) > 0 {
		if c.batch == nil {
			c.batch = c.dg.buffer()
		}
		k := copy(c.batch[len(c.batch):cap(c.batch)], p)
		c.batch = c.batch[:len(c.batch)+k]
		p = p[k:]
		if len(c.batch) == cap(c.batch) {
			c.submit(c.batch)
			c.batch = nil
		}
	}
}

// submit hands b, the next bytes of the log, to the digester; the tail
// keeps its end.
func (c *Capture) submit(b []byte) {
	c.tail.write(b)
	c.dg.submit(b)
}

// takeHeld hands over the written bytes of a batch a ReadFrom is reading
// into, so that whatever comes next follows them. Call with mu held.
func (c *Capture) takeHeld() {
	if c.held == nil || c.heldTaken {
		return
	}
	c.heldTaken = true
	if len(c.held) > 0 {
		c.submit(append(c.dg.buffer(), c.held...))
	}
}

// minReadSpace is the least spare capacity ReadFrom reads into: a batch
// with less is handed to the digester first.
const minReadSpace = batchSize / 4

// ReadFrom copies r into the log until r ends, under the rules of Write:
// each read reaches the log before the next one starts. It reads straight
// into the buffers it hands to the background hashing, so the bytes are
// never copied in user space on their way, which is what makes it cheaper
// than io.Copy into Write. It returns the bytes the log took and nil at
// io.EOF; ErrCapReached when the cap dropped bytes; the write error (also
// returned by Err) when the log could not take them; or the read error.
// Other calls may run while it waits in a read.
func (c *Capture) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		c.mu.Lock()
		if c.closed || c.err != nil || c.capped {
			_, err := c.writeLog(nil)
			c.mu.Unlock()
			return total, err
		}
		buf := c.batch
		c.batch = nil
		if buf != nil && cap(buf)-len(buf) < minReadSpace {
			c.submit(buf)
			buf = nil
		}
		if buf == nil {
			buf = c.dg.buffer()
		}
		c.held, c.heldTaken = buf, false
		c.mu.Unlock()

		n, rerr := r.Read(buf[len(buf):cap(buf)])

		c.mu.Lock()
		fresh := buf[len(buf) : len(buf)+n]
		taken := c.heldTaken
		c.held, c.heldTaken = nil, false
		m, werr := c.writeLog(fresh)
		total += int64(m)
		switch {
		case taken:
			// Something came between: what it wrote is already in
			// order behind the batch's first bytes, handed over then.
			c.account(fresh[:m])
			c.dg.release(buf)
		case len(buf)+m == 0:
			c.dg.release(buf) // nothing yet: no batch to hand over
		default:
			c.batch = buf[:len(buf)+m]
		}
		c.mu.Unlock()
		switch {
		case werr != nil:
			return total, werr
		case rerr == io.EOF:
			return total, nil
		case rerr != nil:
			return total, rerr
		}
	}
}

// Err returns the write error that stopped the capture, or nil: what
// Write and ReadFrom returned when the log could not take bytes.
func (c *Capture) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Written returns how many bytes the log holds so far. It is safe to call
// from any goroutine at any time and never blocks.
func (c *Capture) Written() int64 { return c.written.Load() }

// Tail returns a copy of the last min(Written, TailSize) bytes. It may start
// or end inside a UTF-8 sequence.
func (c *Capture) Tail() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.tail.bytes()
	if c.held != nil && !c.heldTaken {
		out = append(out, c.held...)
	}
	out = append(out, c.batch...)
	return out[max(0, len(out)-len(c.tail.buf)):]
}

// Summary returns the facts about everything written so far. Before Close
// it waits for the background hashing to catch up; its Chars counts an
// unfinished UTF-8 sequence at the end as invalid bytes, as it would be if
// the stream ended now.
func (c *Capture) Summary() Summary {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.final
	}
	return c.summaryLocked()
}

func (c *Capture) summaryLocked() Summary {
	c.takeHeld()
	if c.batch != nil {
		c.submit(c.batch)
		c.batch = nil
	}
	c.dg.wait()
	sum := c.dg.summary()
	sum.Capped = c.capped
	return sum
}

// Close finishes the capture: it waits for the background work, writes the
// last index records, fsyncs the log and the index and closes both. Summary
// stays valid afterwards. A second Close returns nil. An error naming only
// the index leaves the log complete (readers rebuild the index from it).
func (c *Capture) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.final = c.summaryLocked()
	c.dg.recycle()
	errs := []error{c.dg.close()}
	if c.f == nil {
		return errors.Join(errs...) // nothing was written: no log
	}
	if err := c.f.Sync(); err != nil {
		errs = append(errs, fmt.Errorf("close capture: sync %s: %w", c.path, err))
	}
	fi, serr := c.f.Stat()
	if err := c.f.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close capture: %w", err))
	}
	err := errors.Join(errs...)
	if err == nil && serr == nil && fi.Size() == c.final.Bytes {
		// Bank checks this capture's index cheaply (see sealed.go).
		s := sealedLog{log: fi, sha256: c.final.SHA256, hasIdx: c.dg.idx != nil,
			stride: c.dg.ix.stride, idxSize: c.dg.idxSize}
		c.dg.idxHash.Sum(s.idxSum[:0])
		seal(c.path, s)
	}
	return err
}

// ring keeps the last len(buf) bytes written to it.
type ring struct {
	buf  []byte
	end  int // where the next byte goes
	full bool
}

func (r *ring) write(p []byte) {
	n := len(r.buf)
	if len(p) >= n {
		copy(r.buf, p[len(p)-n:])
		r.end, r.full = 0, true
		return
	}
	k := copy(r.buf[r.end:], p)
	copy(r.buf, p[k:])
	if r.end+len(p) >= n {
		r.full = true
	}
	r.end = (r.end + len(p)) % n
}

// bytes returns a copy of the kept bytes, oldest first.
func (r *ring) bytes() []byte {
	if !r.full {
		return append([]byte(nil), r.buf[:r.end]...)
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.end:]...)
	return append(out, r.buf[:r.end]...)
}
