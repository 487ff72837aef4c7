package artifacts

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"testing"
	"time"
)

// BenchmarkGrepScan greps the big log for a line it does not hold, one
// page after another to the end (what a readiness wait or a filter over a
// whole log does), unbudgeted. Beside it, in turn, the floor: the same
// lines read with a bufio.Reader of the same size and matched as bytes,
// with no index, no page and no decoding.
func BenchmarkGrepScan(b *testing.B) {
	path, sum := benchLog(b)
	const pattern = `^panic: `
	re := regexp.MustCompile(pattern)
	var grep, floor time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		var off int64
		for {
			res, err := Read(Source{Path: path, Final: true}, Page{Grep: pattern, Offset: off, Unbudgeted: true})
			if err != nil || len(res.Matches) > 0 {
				b.Fatal(err, res.Matches)
			}
			if !res.HasMore {
				break
			}
			off = res.NextOffset
		}
		grep += time.Since(start)
		start = time.Now()
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r := bufio.NewReaderSize(f, scanChunk)
		var lines int64
		for {
			line, err := r.ReadSlice('\n')
			if len(line) > 0 {
				lines++
				if re.Match(bytes.TrimSuffix(line, newline)) {
					b.Fatal("a match")
				}
			}
			if err != nil {
				break
			}
		}
		f.Close()
		floor += time.Since(start)
		if lines != sum.Lines {
			b.Fatal(lines, sum.Lines)
		}
	}
	b.ReportMetric(float64(sum.Bytes)/1e6/(grep.Seconds()/float64(b.N)), "MB/s")
	b.ReportMetric(float64(sum.Bytes)/1e6/(floor.Seconds()/float64(b.N)), "floor-MB/s")
}
