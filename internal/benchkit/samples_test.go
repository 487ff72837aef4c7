package benchkit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/benchkit"
)

func TestSamplesReportEachMetricsMedianAndRange(t *testing.T) {
	res := testing.Benchmark(func(b *testing.B) {
		var s benchkit.Samples
		for _, v := range []float64{30, 10, 20, 50} {
			s.Add("MB/s", v)
			s.Add("floor-MB/s", 2*v)
			s.Op(time.Duration(v) * time.Millisecond)
		}
		s.Report(b)
	})
	require.Equal(t, map[string]float64{
		"MB/s": 25, "min-MB/s": 10, "max-MB/s": 50,
		"floor-MB/s": 50, "min-floor-MB/s": 20, "max-floor-MB/s": 100,
		"ns/op": 25e6, "min-ns/op": 10e6, "max-ns/op": 50e6,
		"samples": 4,
	}, res.Extra, "an even number of samples has the mean of the middle two as its median")
}

func TestInTurnStartsEachSampleWithTheNextWay(t *testing.T) {
	var order []string
	ways := []func(){func() { order = append(order, "a") }, func() { order = append(order, "b") }, func() { order = append(order, "c") }}
	for i := range 4 {
		benchkit.InTurn(i, ways...)
	}
	require.Equal(t, []string{"a", "b", "c", "b", "c", "a", "c", "a", "b", "a", "b", "c"}, order)
}
