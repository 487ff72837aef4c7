package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/bgcmd/bgcmd"

// recorded parses testdata/bench-output.txt, the output of one
// `go test -bench` run of the module (make bench at a reduced size).
func recorded(t *testing.T) *run {
	t.Helper()
	f, err := os.Open("testdata/bench-output.txt")
	require.NoError(t, err)
	defer f.Close()
	r, err := parse(f, module)
	require.NoError(t, err)
	return r
}

func find(r *run, pkg, name string) *result {
	for _, res := range r.Results {
		if res.Pkg == pkg && res.Name == name {
			return res
		}
	}
	return nil
}

func TestParseReadsEveryResultLineWithItsPackageAndMetrics(t *testing.T) {
	r := recorded(t)
	require.Equal(t, "Oxide Virtual Turin-like Processor", r.CPU, "the fixture's cpu line")
	require.Empty(t, r.Failed)
	pkgs := map[string]bool{}
	for _, res := range r.Results {
		pkgs[res.Pkg] = true
		require.Equal(t, 2, res.Procs, res.Name)
		require.Positive(t, res.Iterations, res.Name)
		require.NotEmpty(t, res.Units, res.Name)
		require.Len(t, res.Metrics, len(res.Units), "%s: every unit once", res.Name)
	}
	require.Equal(t, map[string]bool{"artifacts": true, "cmd/bgcmd": true, "internal/jobstore": true, "policy": true, "runner": true, "soak": true, "webui": true}, pkgs,
		"package paths lose the module prefix")

	capture := find(r, "runner", "BenchmarkCaptureLargeWrites")
	require.NotNil(t, capture)
	require.Equal(t, "ns/op", capture.Units[0], "units keep the order the benchmark printed them in")
	for _, u := range []string{"MB/s", "pipe-MB/s", "direct-MB/s", "peak-rss-KiB", "idle-peak-rss-KiB", "samples"} {
		require.Contains(t, capture.Metrics, u)
	}
	require.GreaterOrEqual(t, capture.Metrics["samples"], 3.0)
	require.LessOrEqual(t, capture.Metrics["min-MB/s"], capture.Metrics["MB/s"])
	require.GreaterOrEqual(t, capture.Metrics["max-MB/s"], capture.Metrics["MB/s"])
}

func TestParseReadsExactNumbersAndKeepsNonResultLinesInTheLog(t *testing.T) {
	out := `goos: linux
pkg: github.com/bgcmd/bgcmd/jobstore
cpu: Test CPU @ 1GHz    
BenchmarkCountersAtMillion-2   	    1113	    614440 ns/op	       614.4 µs/op
BenchmarkPrune-8   	       1	2.5e+09 ns/op	  40000 jobs/s	     1e+05 floor-jobs/s	3 samples
PASS
ok  	github.com/bgcmd/bgcmd/jobstore	57.425s
`
	r, err := parse(strings.NewReader(out), module)
	require.NoError(t, err)
	require.Equal(t, "Test CPU @ 1GHz", r.CPU, "the cpu line, its padding trimmed")
	require.Len(t, r.Results, 2)
	require.Equal(t, &result{Pkg: "jobstore", Name: "BenchmarkCountersAtMillion", Procs: 2, Iterations: 1113,
		Metrics: map[string]float64{"ns/op": 614440, "µs/op": 614.4}, Units: []string{"ns/op", "µs/op"}}, r.Results[0])
	require.Equal(t, 8, r.Results[1].Procs)
	require.Equal(t, 1e5, r.Results[1].Metrics["floor-jobs/s"])
	require.Equal(t, 2.5e9, r.Results[1].Metrics["ns/op"])
	require.Contains(t, r.Log, "PASS")
	require.Contains(t, r.Log, "goos: linux")
}

func TestParseJoinsABenchmarkNameToTheResultPrintedLinesLater(t *testing.T) {
	// A benchmark that writes to stdout while it runs splits its line.
	out := "pkg: github.com/bgcmd/bgcmd/soak\n" +
		"BenchmarkCLIRun-2   \tsome output of the benchmark\n" +
		"BenchmarkCLIRun-2\n" +
		"more output\n" +
		"      73\t  16900000 ns/op\t        15.8 median-ms\n"
	r, err := parse(strings.NewReader(out), module)
	require.NoError(t, err)
	require.Len(t, r.Results, 1)
	require.Equal(t, "soak", r.Results[0].Pkg)
	require.Equal(t, "BenchmarkCLIRun", r.Results[0].Name)
	require.EqualValues(t, 73, r.Results[0].Iterations)
	require.Equal(t, 15.8, r.Results[0].Metrics["median-ms"])
}

func TestParseListsThePackagesWhoseBenchmarksFailed(t *testing.T) {
	out := `pkg: github.com/bgcmd/bgcmd/runner
--- FAIL: BenchmarkPrune
    prune_bench_test.go:40: boom
FAIL
exit status 1
FAIL	github.com/bgcmd/bgcmd/runner	12.3s
FAIL	github.com/bgcmd/bgcmd	0.1s
ok  	github.com/bgcmd/bgcmd/policy	1.0s
`
	r, err := parse(strings.NewReader(out), module)
	require.NoError(t, err)
	require.Equal(t, []string{"runner", "."}, r.Failed)
	require.Empty(t, r.Results)
}
