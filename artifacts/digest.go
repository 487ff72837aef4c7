package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"sync"
)

// Hashing and counting cost about as much as writing the log itself
// (sha256 runs at some 2 GB/s, a 4 KiB write into the page cache at some
// 1.4 GB/s), so a Capture hands what it wrote, in batches (copies of what
// Write was given, or the buffers ReadFrom read into), to a goroutine that
// hashes, counts and indexes them while the writer goes on.
// The goroutine runs only while there is work (none outlives an idle or
// closed capture), and at most maxQueued batches wait for it, which bounds
// memory.
const (
	batchSize = 256 << 10
	maxQueued = 4
	// resumeQueued is how few queued batches let a writer that waited for
	// room go on.
	resumeQueued = maxQueued / 2
	// startQueued is how many queued batches start the goroutine when it
	// is not running (Summary and Close start it for any). Starting it is
	// a wake of an idle thread, which costs more CPU here than hashing a
	// few KiB: started for every batch, it caught up and stopped after
	// each one, some 4,000 wakes per GiB of log. Starting it at three
	// cut a Capture's CPU per GiB by about 5% and raised its throughput
	// by about 3% of a plain write's (4 KiB writes, in turn with the
	// plain write, on a 2-core machine). The index of a log that stops
	// then lags by the two batches waiting and the one being filled,
	// under indexFlush's 2 MiB, until the next batch or Close.
	startQueued = 3
)

// A writer waits for room at maxQueued batches: the goroutine must have
// been started by then.
var _ [maxQueued - startQueued]struct{}

// indexFlush is how many bytes of checkpoint records the digester gathers
// before it appends them to the index file: 128 records, one per 16 KiB
// stride, so a log written flat out has its index at most 2 MiB behind.
// Whenever the digester catches up with the writer it appends what it has,
// so a log written at any pace has its index at most startQueued batches
// behind. (One write per 256 KiB batch was a thousand small writes per GiB
// of log.)
const indexFlush = 128 * recordSize

// digester turns batches of written bytes, in order, into the hash, the
// counts and the index records appended to the index file.
type digester struct {
	mu      sync.Mutex
	cond    sync.Cond
	queue   [][]byte
	free    [][]byte
	running bool

	// Owned by the one drain goroutine while it runs; read by others only
	// after wait.
	hash    hash.Hash
	ix      *indexer
	idxPath string
	idx     *os.File  // created at the first record
	idxHash hash.Hash // of every byte written to idx
	idxSize int64
	err     error // the first index write error; no records are written after it
}

func newDigester(idxPath string, stride int64) *digester {
	d := &digester{hash: sha256.New(), ix: newIndexer(stride), idxPath: idxPath, idxHash: sha256.New()}
	d.cond.L = &d.mu
	return d
}

// batches keeps batch buffers between captures: a capture takes them as it
// needs them and gives them back when it closes, so a short job's streams
// cost no fresh (zeroed, faulted-in) buffers.
var batches = sync.Pool{New: func() any { b := make([]byte, 0, batchSize); return &b }}

// buffer returns an empty batch buffer of capacity batchSize.
func (d *digester) buffer() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := len(d.free); n > 0 {
		b := d.free[n-1]
		d.free = d.free[:n-1]
		return b
	}
	return (*batches.Get().(*[]byte))[:0]
}

// recycle gives the free buffers back to batches. Call after wait, once
// no more batches will be submitted.
func (d *digester) recycle() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, b := range d.free {
		batches.Put(&b)
	}
	d.free = nil
}

// release returns b, a buffer from buffer that was not submitted.
func (d *digester) release(b []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.free = append(d.free, b[:0])
}

// submit queues b, waiting while maxQueued batches are already queued.
func (d *digester) submit(b []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.queue) >= maxQueued {
		d.cond.Wait()
	}
	d.queue = append(d.queue, b)
	if len(d.queue) >= startQueued {
		d.start()
	}
}

// start starts the goroutine that drains the queue, unless it runs.
// Call with mu held.
func (d *digester) start() {
	if !d.running {
		d.running = true
		go d.drain()
	}
}

// drain processes queued batches until the queue is empty, and appends
// the checkpoints it gathered to the index before it stops.
func (d *digester) drain() {
	var done []byte
	for {
		d.mu.Lock()
		if done != nil {
			d.free = append(d.free, done[:0])
			done = nil
		}
		if len(d.queue) == 0 {
			if len(d.ix.pending()) > 0 {
				d.mu.Unlock()
				d.writeRecords() // then look again: a batch may have come
				continue
			}
			d.running = false
			d.cond.Broadcast()
			d.mu.Unlock()
			return
		}
		b := d.queue[0]
		// Shift, not reslice: the queue's array then serves for good.
		d.queue = d.queue[:copy(d.queue, d.queue[1:])]
		if len(d.queue) == resumeQueued {
			// A writer waiting for room gets it in a run of batches, not
			// one at a time: each wake is a park and a wake of goroutines,
			// and often of a thread.
			d.cond.Broadcast()
		}
		d.mu.Unlock()
		d.process(b)
		done = b
	}
}

func (d *digester) process(b []byte) {
	d.hash.Write(b)
	d.ix.write(b)
	if len(d.ix.pending()) >= indexFlush {
		d.writeRecords()
	}
}

// writeRecords appends the checkpoints gathered so far to the index file,
// creating it at the first.
func (d *digester) writeRecords() {
	recs := d.ix.pending()
	defer d.ix.clearPending()
	if len(recs) == 0 || d.err != nil {
		return
	}
	if d.idx == nil {
		f, err := os.OpenFile(d.idxPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err == nil {
			h := encodeHeader(d.ix.stride)
			if _, err = f.Write(h); err != nil {
				_ = f.Close()
			}
			d.idxHash.Write(h)
			d.idxSize += int64(len(h))
		}
		if err != nil {
			d.err = fmt.Errorf("create index: %w", err)
			return
		}
		d.idx = f
	}
	if _, err := d.idx.Write(recs); err != nil {
		d.err = fmt.Errorf("write index: %w", err)
	}
	d.idxHash.Write(recs)
	d.idxSize += int64(len(recs))
}

// wait returns once every submitted batch is processed.
func (d *digester) wait() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.queue) > 0 {
		d.start()
	}
	for d.running || len(d.queue) > 0 {
		d.cond.Wait()
	}
}

// summary returns the facts about everything processed. Call after wait.
func (d *digester) summary() Summary {
	sum := d.ix.summary()
	sum.SHA256 = hex.EncodeToString(d.hash.Sum(nil))
	return sum
}

// close syncs and closes the index file. Call after wait.
func (d *digester) close() error {
	errs := []error{d.err}
	if d.idx == nil {
		return errors.Join(errs...)
	}
	if err := d.idx.Sync(); err != nil {
		errs = append(errs, fmt.Errorf("sync index: %w", err))
	}
	if err := d.idx.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close index: %w", err))
	}
	return errors.Join(errs...)
}
