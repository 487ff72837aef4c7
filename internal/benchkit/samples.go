package benchkit

import (
	"sort"
	"testing"
	"time"
)

// MinSamples is the fewest samples a benchmark makes whose one run takes
// seconds (capture, reconcile, prune): the report shows the median of the
// samples and their spread, not one lucky or unlucky run.
const MinSamples = 3

// SampleCount is how many samples such a benchmark makes: b.N, and at
// least MinSamples.
func SampleCount(b *testing.B) int { return max(b.N, MinSamples) }

// Samples collects the per-sample values of a benchmark's metrics. The
// benchmarks that use it interleave bgcmd and its baseline in every sample,
// so a busy neighbour slows both alike.
type Samples struct {
	units []string
	vals  map[string][]float64
}

// Add records one sample's value of a metric.
func (s *Samples) Add(unit string, v float64) {
	if s.vals == nil {
		s.vals = map[string][]float64{}
	}
	if _, ok := s.vals[unit]; !ok {
		s.units = append(s.units, unit)
	}
	s.vals[unit] = append(s.vals[unit], v)
}

// Op records one sample's time of bgcmd's run: it becomes ns/op.
func (s *Samples) Op(d time.Duration) { s.Add("ns/op", float64(d.Nanoseconds())) }

// Report reports every metric's median under its own unit (ns/op and MB/s
// included: they replace the framework's, which divide by b.N) and its
// spread as min-<unit> and max-<unit>, plus the number of samples.
func (s *Samples) Report(b *testing.B) {
	b.Helper()
	for _, u := range s.units {
		v := append([]float64(nil), s.vals[u]...)
		sort.Float64s(v)
		b.ReportMetric(median(v), u)
		b.ReportMetric(v[0], "min-"+u)
		b.ReportMetric(v[len(v)-1], "max-"+u)
	}
	if len(s.units) > 0 {
		b.ReportMetric(float64(len(s.vals[s.units[0]])), "samples")
	}
}

// median of sorted values.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// InTurn runs each of ways once, sample i starting with ways[i%len(ways)]
// and going round: over the samples each way goes first as often as the
// others, so neither side always meets a disk or a cache the other left.
func InTurn(i int, ways ...func()) {
	for k := range ways {
		ways[(i+k)%len(ways)]()
	}
}
