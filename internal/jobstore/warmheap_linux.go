package jobstore

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
	"modernc.org/libc"

	"github.com/bgcmd/bgcmd/internal/procmaps"
)

// The SQLite library's allocator (modernc.org/memory) carves its small
// blocks from 64 KiB regions, each aligned to its size, that it maps
// warmHeapBatch at a time in one mapping. A process's first connection
// and first statements take some 700 KiB of the first such batch.
const (
	warmHeapRegion = 64 << 10
	warmHeapBatch  = 16
)

var warmHeapOnce sync.Once

// warmHeap maps in, with one madvise(MADV_POPULATE_WRITE), the memory
// the SQLite library's allocator hands its first small blocks from,
// before the first connection opens: reading the schema and compiling
// statements otherwise touch its pages one by one, and on a virtual
// machine each first touch is a fault that costs some 10 µs. A detached
// supervisor took about 180 such faults, a `bgcmd run` about 80. Mapped
// in at once, `bgcmd run -- /bin/true` used about 1 ms less CPU, both
// processes together (53.7 against 52.7 ms, 30 groups of 10 runs each,
// in turn).
//
// It allocates (and frees) a small block and maps in warmHeapWindow of
// the block, within the private writable mapping that holds it: the
// kernel may have merged the allocator's batch with a neighbouring
// anonymous mapping, so the mapping alone does not bound what it maps
// in. Whatever goes wrong, nothing changes but the faults.
func warmHeap() {
	warmHeapOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		p := libc.Xmalloc(tls, 64)
		if p == 0 {
			return
		}
		defer libc.Xfree(tls, p)
		lo, hi, ok := writableMappingOf(p)
		if !ok {
			return
		}
		lo, hi = warmHeapWindow(p, lo, hi)
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, lo, hi-lo, unix.MADV_POPULATE_WRITE)
	})
}

// warmHeapWindow returns the part of the mapping [lo, hi) that any batch
// of the allocator holding the block p can span: where in its batch p's
// region lies is not known, so the window reaches warmHeapBatch-1
// regions below that region and warmHeapBatch-1 above it, at most 31
// regions (1.94 MiB) in all. A batch that is a mapping of its own is
// mapped in whole and alone.
func warmHeapWindow(p, lo, hi uintptr) (from, to uintptr) {
	region := p &^ (warmHeapRegion - 1)
	const reach = (warmHeapBatch - 1) * warmHeapRegion
	from, to = lo, hi
	if region >= reach && region-reach > from {
		from = region - reach
	}
	if end := region + warmHeapRegion + reach; end < to {
		to = end
	}
	return from, to
}

// writableMappingOf returns the private writable mapping of
// /proc/self/maps ("rw-p") that holds addr.
func writableMappingOf(addr uintptr) (lo, hi uintptr, ok bool) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, 0, false
	}
	return procmaps.Find(maps, addr, "rw-p")
}
