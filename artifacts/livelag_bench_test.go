package artifacts

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkReadPageLiveTrailing reads a lines page at 99.9% of the big log
// as a reader of a live job does while the capture is written flat out:
// its index as far behind as the capture leaves it (maxLastSegment).
// Beside it, in turn, the same page with the index caught up. A reader
// that called such an index stale rescanned the whole log for each page.
func BenchmarkReadPageLiveTrailing(b *testing.B) {
	path, sum := benchLog(b)
	idx, err := os.ReadFile(path + IndexSuffix)
	if err != nil {
		b.Fatal(err)
	}
	// Keep the records that leave no more than maxLastSegment after the
	// last one.
	keep := (sum.Bytes - (3<<20 + 1<<19) + defaultStride - 1) / defaultStride
	trailing := filepath.Join(b.TempDir(), "trailing"+IndexSuffix)
	if err := os.WriteFile(trailing, idx[:headerSize+keep*recordSize], 0o600); err != nil {
		b.Fatal(err)
	}
	offset := sum.Lines - sum.Lines/1000
	page := Page{Unit: UnitLines, Offset: offset, Limit: benchPageLines}
	read := func(src Source) time.Duration {
		start := time.Now()
		res, err := Read(src, page)
		took := time.Since(start)
		if err != nil || res.NextOffset != offset+benchPageLines {
			b.Fatal(err, res.NextOffset)
		}
		return took
	}
	var behind, caughtUp time.Duration
	b.ResetTimer()
	for b.Loop() {
		behind += read(Source{Path: path, IndexPath: trailing})
		caughtUp += read(Source{Path: path})
	}
	b.ReportMetric(float64(behind.Microseconds())/float64(b.N), "µs/page")
	b.ReportMetric(float64(caughtUp.Microseconds())/float64(b.N), "caught-up-µs/page")
}
