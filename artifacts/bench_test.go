package artifacts

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bgcmd/bgcmd/internal/benchkit"
)

// The read benchmarks page at 99.9% of a large log (BGCMD_BENCH_LOG_MB MiB,
// default 1024), written once per process through a Capture into a
// temporary directory that TestMain removes. Compare
// BenchmarkReadPageChars with BenchmarkScanChars (the same page found by
// scanning from the start) and BenchmarkReadPageLines with
// BenchmarkScanLines; BenchmarkCapture with BenchmarkCaptureBaselineFile
// (the same 4 KiB writes straight to a file, with the same writeback and
// the same fsync, so that the difference is the hashing and indexing);
// BenchmarkCaptureIndexing runs that pair as interleaved samples.

var bigLog struct {
	once sync.Once
	dir  string
	path string
	sum  Summary
	err  error
}

func TestMain(m *testing.M) {
	m.Run()
	if bigLog.dir != "" {
		_ = os.RemoveAll(bigLog.dir)
	}
}

// logLines is what the big log repeats: build-log lines of varied length,
// mostly ASCII with some multi-byte text.
func logLines() []byte {
	var b bytes.Buffer
	for i := 0; i < 200; i++ {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "2026-01-02T15:04:05.%06dZ INFO  worker %d: compiled package pkg/%d in %dms\n", i, i%8, i, i*7)
		case 1:
			fmt.Fprintf(&b, "ok   github.com/example/project/internal/module%d\t%d.%03ds\n", i, i%9, i)
		case 2:
			fmt.Fprintf(&b, "--- PASS: TestParse/%d (0.%02ds) ✓ résumé 测试 😀\n", i, i%100)
		case 3:
			fmt.Fprintf(&b, "warning: unused variable `x%d` at src/lib.rs:%d:%d\n", i, i*3, i%80)
		default:
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

func benchLog(b *testing.B) (string, Summary) {
	b.Helper()
	bigLog.once.Do(func() {
		mb := int64(1024)
		if s := os.Getenv("BGCMD_BENCH_LOG_MB"); s != "" {
			if mb, bigLog.err = strconv.ParseInt(s, 10, 64); bigLog.err != nil {
				return
			}
		}
		if bigLog.dir, bigLog.err = os.MkdirTemp(os.TempDir(), "bgcmd-bench-"); bigLog.err != nil {
			return
		}
		bigLog.path = filepath.Join(bigLog.dir, "big.log")
		c, err := NewCapture(CaptureOptions{Path: bigLog.path})
		if err != nil {
			bigLog.err = err
			return
		}
		chunk := bytes.Repeat(logLines(), 8)
		for c.Written() < mb<<20 {
			if _, err := c.Write(chunk); err != nil {
				bigLog.err = err
				return
			}
		}
		if bigLog.err = c.Close(); bigLog.err != nil {
			return
		}
		bigLog.sum = c.Summary()
		// A capture keeps only the last windows of its log in the page
		// cache. The scans the page reads are set beside count from
		// memory, as a reader of a log read before would: read it through
		// once, untimed, so that no benchmark's first run pays for the disk.
		bigLog.err = warmCache(bigLog.path)
	})
	if bigLog.err != nil {
		b.Fatal(bigLog.err)
	}
	return bigLog.path, bigLog.sum
}

const (
	benchPageChars = 4096
	benchPageLines = 100
)

func BenchmarkReadPageChars(b *testing.B) {
	path, sum := benchLog(b)
	src := Source{Path: path, Final: true}
	offset := sum.Chars - sum.Chars/1000
	b.ResetTimer()
	for b.Loop() {
		res, err := Read(src, Page{Unit: UnitChars, Offset: offset, Limit: benchPageChars})
		if err != nil || res.NextOffset != offset+benchPageChars {
			b.Fatal(err, res.NextOffset)
		}
	}
}

func BenchmarkReadPageLines(b *testing.B) {
	path, sum := benchLog(b)
	src := Source{Path: path, Final: true}
	offset := sum.Lines - sum.Lines/1000
	b.ResetTimer()
	for b.Loop() {
		res, err := Read(src, Page{Unit: UnitLines, Offset: offset, Limit: benchPageLines})
		if err != nil || res.NextOffset != offset+benchPageLines {
			b.Fatal(err, res.NextOffset)
		}
	}
}

// BenchmarkScanChars finds the BenchmarkReadPageChars page by counting
// characters from the start of the log (as fast as Capture counts them),
// then reads it.
func BenchmarkScanChars(b *testing.B) {
	path, sum := benchLog(b)
	offset := sum.Chars - sum.Chars/1000
	b.ResetTimer()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		pos, err := scanToChar(f, offset)
		if err != nil {
			b.Fatal(err)
		}
		page := make([]byte, benchPageChars*4)
		n, _ := f.ReadAt(page, pos)
		k, got, _ := takeRunes(page[:n], benchPageChars, n, false)
		_ = decodeText(page[:k])
		_ = f.Close()
		if got != benchPageChars {
			b.Fatal(got)
		}
	}
}

// BenchmarkScanLines finds the BenchmarkReadPageLines page by counting
// newlines from the start of the log, then reads it.
func BenchmarkScanLines(b *testing.B) {
	path, sum := benchLog(b)
	offset := sum.Lines - sum.Lines/1000
	b.ResetTimer()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		pos, err := scanToLine(f, offset)
		if err != nil {
			b.Fatal(err)
		}
		page := make([]byte, 64<<10)
		n, _ := f.ReadAt(page, pos)
		end, lines := 0, 0
		for lines < benchPageLines {
			end += bytes.IndexByte(page[end:n], '\n') + 1
			lines++
		}
		_ = decodeText(page[:end])
		_ = f.Close()
	}
}

// warmCache reads the file at path through once, bringing it into the
// page cache.
func warmCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, struct{ io.Reader }{f})
	return err
}

func scanToChar(f *os.File, target int64) (int64, error) {
	buf := make([]byte, 256<<10)
	var pos, chars int64
	for chars < target {
		n, err := f.ReadAt(buf, pos)
		if n == 0 {
			return pos, err
		}
		b := buf[:n]
		if whole := b[:incompleteSuffix(b)]; chars+int64(countRunes(whole)) < target {
			chars += int64(countRunes(whole))
			pos += int64(len(whole))
			continue
		}
		k, got, _ := takeRunes(b, target-chars, n, err == io.EOF)
		pos += int64(k)
		chars += got
	}
	return pos, nil
}

func scanToLine(f *os.File, target int64) (int64, error) {
	buf := make([]byte, 256<<10)
	var pos, lines int64
	for {
		n, err := f.ReadAt(buf, pos)
		if n == 0 {
			return pos, err
		}
		b := buf[:n]
		if c := int64(bytes.Count(b, newline)); lines+c < target {
			lines += c
			pos += int64(n)
			continue
		}
		off := 0
		for lines < target {
			off += bytes.IndexByte(b[off:], '\n') + 1
			lines++
		}
		return pos + int64(off), nil
	}
}

// BenchmarkReadPageStride compares index strides on the same log: a page
// costs a few index probes and scans about three strides (see
// defaultStride), so a smaller stride means a bigger index and a larger one
// longer scans.
func BenchmarkReadPageStride(b *testing.B) {
	path, sum := benchLog(b)
	for _, stride := range []int64{8 << 10, 16 << 10, 32 << 10, 64 << 10} {
		idx := fmt.Sprintf("%s.%d%s", path, stride, IndexSuffix)
		if _, err := os.Stat(idx); err != nil {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			_, recs, err := scanLog(f, stride, false)
			_ = f.Close()
			if err == nil {
				err = writeIndexFile(idx, stride, recs)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		src := Source{Path: path, IndexPath: idx, Final: true}
		for _, p := range []Page{
			{Unit: UnitChars, Offset: sum.Chars - sum.Chars/1000, Limit: benchPageChars},
			{Unit: UnitLines, Offset: sum.Lines - sum.Lines/1000, Limit: benchPageLines},
		} {
			b.Run(fmt.Sprintf("stride=%dKiB/%s", stride>>10, p.Unit), func(b *testing.B) {
				for b.Loop() {
					if _, err := Read(src, p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// captureChunk is one small write of build output.
var captureChunk = logLines()[:4096]

// rotateEvery bounds the benchmark files. Both capture benchmarks replace
// theirs the same way: the fsync and close are timed, since a capture is
// durable only once Close has fsynced it (and Capture starts that
// writeback while it writes, which an untimed fsync would hide in the
// baseline alone); removing the file and creating the next are not.
const rotateEvery = 64 << 20

// BenchmarkCapture captures 4 KiB writes of build output: the write, the
// sha256 and index taken beside it, and the fsyncs of Close.
func BenchmarkCapture(b *testing.B) {
	dir := b.TempDir()
	newCap := func(i int) *Capture {
		c, err := NewCapture(CaptureOptions{Path: filepath.Join(dir, fmt.Sprintf("out%d.log", i))})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	c, name := newCap(0), filepath.Join(dir, "out0.log")
	b.SetBytes(int64(len(captureChunk)))
	cpu := startCPU(b)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := c.Write(captureChunk); err != nil {
			b.Fatal(err)
		}
		if c.Written() >= rotateEvery {
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_ = os.Remove(name)
			_ = os.Remove(name + IndexSuffix)
			c, name = newCap(i+1), filepath.Join(dir, fmt.Sprintf("out%d.log", i+1))
			b.StartTimer()
		}
	}
	if err := c.Close(); err != nil { // the hashing and the fsync are part of the cost
		b.Fatal(err)
	}
	b.StopTimer()
	cpu.report()
}

// BenchmarkCaptureBaselineFile writes what BenchmarkCapture does straight
// to a file, starting writeback every writebackEvery bytes and dropping the
// cache behind as Capture's writer does and fsyncing at the end as
// Capture.Close does: the same I/O, without the hash and the index.
func BenchmarkCaptureBaselineFile(b *testing.B) {
	dir := b.TempDir()
	newFile := func(i int) *os.File {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("out%d.log", i)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	f := newFile(0)
	written := 0
	b.SetBytes(int64(len(captureChunk)))
	cpu := startCPU(b)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if written = writePlain(b, f, written); written >= rotateEvery {
			syncClose(b, f)
			b.StopTimer()
			_ = os.Remove(f.Name())
			f, written = newFile(i+1), 0
			b.StartTimer()
		}
	}
	syncClose(b, f)
	b.StopTimer()
	cpu.report()
}

// indexingSamples is how many samples BenchmarkCaptureIndexing makes, and
// indexingSize how many bytes each of its ways writes in one.
const (
	indexingSamples = 5
	indexingSize    = 256 << 20
)

// BenchmarkCaptureIndexing is the pair above run as interleaved samples,
// which the report's indexing-overhead figure reads: in each sample,
// indexingSize bytes of 4 KiB writes of build output through a Capture
// (closed, so fsynced) and the same writes straight to a new file with the
// same writeback and a final fsync, in turn, so that a busy neighbour or a
// slow disk slows both alike. A third way, the hashing floor (hashed-),
// makes the plain writes and also gathers them into batches of a
// Capture's size that a second goroutine hashes with sha256, as a Capture
// does beside its writer: it has no index, so it shows how much of the
// gap to the plain write is the hash every Capture must take. It reports
// the median MB/s and CPU seconds per GiB of each (the process's CPU,
// every thread), with their ranges.
func BenchmarkCaptureIndexing(b *testing.B) {
	dir := b.TempDir()
	var s benchkit.Samples
	measure := func(unit string, write func(name string)) {
		name := filepath.Join(dir, unit+".log")
		cpu := processCPU(b)
		start := time.Now()
		write(name)
		took, used := time.Since(start), processCPU(b)-cpu
		s.Add(unit+"MB/s", indexingSize/1e6/took.Seconds())
		s.Add(unit+"cpu-s/GiB", used.Seconds()/(indexingSize/float64(1<<30)))
		_ = os.Remove(name)
		_ = os.Remove(name + IndexSuffix)
	}
	ways := []func(){
		func() {
			measure("", func(name string) {
				c, err := NewCapture(CaptureOptions{Path: name})
				if err != nil {
					b.Fatal(err)
				}
				for c.Written() < indexingSize {
					if _, err := c.Write(captureChunk); err != nil {
						b.Fatal(err)
					}
				}
				if err := c.Close(); err != nil {
					b.Fatal(err)
				}
			})
		},
		func() { measure("plain-", func(name string) { writePlainFile(b, name, nil) }) },
		func() { measure("hashed-", func(name string) { writePlainFile(b, name, newBatchHasher()) }) },
	}
	for i := range max(b.N, indexingSamples) {
		benchkit.InTurn(i, ways...)
	}
	s.Report(b)
}

// writePlainFile writes indexingSize bytes of captureChunk to the new
// file name as writePlain does, and fsyncs it; with h, each write is also
// handed to h (the hashing floor), whose sum is taken at the end.
func writePlainFile(b *testing.B, name string, h *batchHasher) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	for written := 0; written < indexingSize; {
		written = writePlain(b, f, written)
		if h != nil {
			h.write(captureChunk)
		}
	}
	syncClose(b, f)
	if h != nil {
		if sum := h.sum(); len(sum) != sha256.Size {
			b.Fatalf("the hashing floor's sum is %d bytes", len(sum))
		}
	}
}

// batchHasher is the hashing floor's second goroutine: write copies what
// was just written into a batch of a Capture's size and hands each full
// batch to a goroutine that hashes it, with as many batches in flight as
// a Capture lets queue.
type batchHasher struct {
	batch   []byte
	free    chan []byte
	written chan []byte
	done    chan []byte
}

func newBatchHasher() *batchHasher {
	h := &batchHasher{free: make(chan []byte, maxQueued+1), written: make(chan []byte, maxQueued), done: make(chan []byte)}
	for range maxQueued + 1 {
		h.free <- make([]byte, 0, batchSize)
	}
	go func() {
		sum := sha256.New()
		for b := range h.written {
			sum.Write(b)
			h.free <- b[:0]
		}
		h.done <- sum.Sum(nil)
	}()
	return h
}

func (h *batchHasher) write(p []byte) {
	for len(p) > 0 {
		if h.batch == nil {
			h.batch = <-h.free
		}
		k := copy(h.batch[len(h.batch):cap(h.batch)], p)
		h.batch, p = h.batch[:len(h.batch)+k], p[k:]
		if len(h.batch) == cap(h.batch) {
			h.written <- h.batch
			h.batch = nil
		}
	}
}

// sum hands over the last batch and returns the sha256 of everything
// written.
func (h *batchHasher) sum() []byte {
	if len(h.batch) > 0 {
		h.written <- h.batch
	}
	close(h.written)
	return <-h.done
}

// writePlain writes captureChunk to f, which holds written bytes, and
// starts the writeback of the writebackEvery bytes it completes and drops
// the cache of the writebackEvery bytes before them, as Capture's writer
// does; it returns the bytes f then holds.
func writePlain(b *testing.B, f *os.File, written int) int {
	n, err := f.Write(captureChunk)
	if err != nil {
		b.Fatal(err)
	}
	if written += n; written%writebackEvery < n {
		window := int64(written - written%writebackEvery - writebackEvery)
		startWriteback(f, window, writebackEvery)
		dropWritten(f, window-writebackEvery, min(window, writebackEvery))
	}
	return written
}

// syncClose fsyncs and closes f, as Capture.Close does its log.
func syncClose(b *testing.B, f *os.File) {
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// cpuMeter reports the process's CPU time (user and system, all threads)
// per operation as cpu-ns/op: on a busy machine wall time says little about
// a writer that uses a second core, CPU time says what it costs.
type cpuMeter struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) cpuMeter { return cpuMeter{b: b, start: processCPU(b)} }

// report includes the untimed file rotations, which cost both benchmarks
// the same.
func (m cpuMeter) report() {
	m.b.ReportMetric(float64(processCPU(m.b)-m.start)/float64(m.b.N), "cpu-ns/op")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDigest is the background work of a capture alone, per batch
// (batchSize bytes): sha256, character and line counts and checkpoints (the index file
// in a temporary directory), on build-log text and on zero bytes. Its
// cpu-s/GiB is the CPU a capture spends beyond writing the log; sha256
// alone is about 0.7 of it on this machine's SHA extensions.
func BenchmarkDigest(b *testing.B) {
	for _, in := range []struct {
		name string
		data []byte
	}{{"text", bytes.Repeat(logLines(), 1+batchSize/len(logLines()))[:batchSize]}, {"zero", make([]byte, batchSize)}} {
		b.Run(in.name, func(b *testing.B) {
			d := newDigester(filepath.Join(b.TempDir(), "out.log"+IndexSuffix), defaultStride)
			b.SetBytes(batchSize)
			cpu := startCPU(b)
			for b.Loop() {
				d.process(in.data)
			}
			b.StopTimer()
			cpu.report()
			b.ReportMetric(float64(processCPU(b)-cpu.start)/float64(b.N)*float64(1<<30)/batchSize/1e9, "cpu-s/GiB")
			_ = d.close()
		})
	}
}
