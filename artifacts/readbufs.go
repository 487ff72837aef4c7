package artifacts

import "sync"

// readBufs keeps the buffers a view reads the log into (spans between
// checkpoints, pages, scan chunks) from one Read to the next. Nothing a
// Read returns points into them (finish copies every page out), so a view
// gives them back when it closes. A Read then allocates little beyond its
// result: the garbage collector, the zeroing of fresh buffers and the
// runtime's return of freed memory to the system had been a third of a
// page's CPU.
var readBufs sync.Pool

// minReadBuf is the least capacity a new read buffer gets: enough for the
// two strides of a span and a 4,096-character page, so that most buffers
// suit most reads.
const minReadBuf = 64 << 10

// take returns a buffer of length n, from readBufs when the one there is
// large enough; the view gives it back when it closes. Its bytes are
// whatever the last reader left: fill it before reading it.
func (v *view) take(n int) []byte {
	var b []byte
	if p, _ := readBufs.Get().(*[]byte); p != nil && cap(*p) >= n {
		b = (*p)[:n]
	} else {
		b = make([]byte, n, max(n, minReadBuf))
	}
	v.taken = append(v.taken, b)
	return b
}

// giveBack returns the buffers the view took to readBufs.
func (v *view) giveBack() {
	for _, b := range v.taken {
		readBufs.Put(&b)
	}
	v.taken = nil
}
