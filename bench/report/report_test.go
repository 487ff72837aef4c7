package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func testMachine() *machine {
	return &machine{Cores: 2, GOMAXPROCS: 2, GoVersion: "go1.99", CPU: "Test CPU", OS: "linux/amd64",
		Kernel: "6.0", MemoryMiB: 1024, Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		LoadBefore: "1.00 1.00 1.00", LoadAfter: "2.00 2.00 2.00"}
}

func figureByName(t *testing.T, rep *report, name string) figureOut {
	t.Helper()
	for _, f := range rep.Figures {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no figure %q", name)
	return figureOut{}
}

func TestComputeRatioReadsEachKindTheWayItsLabelSays(t *testing.T) {
	for _, tc := range []struct {
		kind      ratioKind
		v, base   float64
		want      float64
		wantLabel string
	}{
		{ratioCost, 3, 2, 1.5, "× baseline time"},
		{ratioShare, 400, 1600, 0.25, "of baseline speed"},
		{ratioSpeedup, 100, 250_000, 2500, "faster than baseline"},
		{ratioSize, 20_000, 16_000, 1.25, "× baseline size"},
		{ratioCount, 600, 400, 1.5, "× baseline count"},
	} {
		got, ok := computeRatio(tc.kind, tc.v, tc.base)
		require.True(t, ok)
		require.InDelta(t, tc.want, got, 1e-9, tc.wantLabel)
		require.Equal(t, tc.wantLabel, tc.kind.label())
	}
	_, ok := computeRatio(ratioShare, 1, 0)
	require.False(t, ok, "no ratio over a zero baseline")
	_, ok = computeRatio(ratioSpeedup, 0, 1)
	require.False(t, ok, "no speedup of a zero time")
}

func TestEvaluateSaysMetMissedOrUnknownForEachKindOfCheck(t *testing.T) {
	ratio := 0.5
	fo := figureOut{Bgcmd: measure{Value: 30_000, Found: true}, Baseline: &measure{Value: 20_000, Found: true}, Ratio: &ratio}
	yes, no := true, false
	for _, tc := range []struct {
		name   string
		checks []check
		want   *bool
	}{
		{"value under its limit", []check{{"value", "<=", 30_000}}, &yes},
		{"value over its limit", []check{{"value", "<=", 29_999}}, &no},
		{"ratio over its floor", []check{{"ratio", ">=", 0.5}}, &yes},
		{"ratio under its floor", []check{{"ratio", ">=", 0.8}}, &no},
		{"excess within its limit", []check{{"excess", "<=", 10_000}}, &yes},
		{"excess over its limit", []check{{"excess", "<=", 9_999}}, &no},
		{"every check must hold", []check{{"value", "<=", 30_000}, {"ratio", ">=", 0.8}}, &no},
		{"no numeric aim", nil, nil},
		{"an unknown operator decides nothing", []check{{"value", "==", 30_000}}, nil},
		{"an unknown quantity decides nothing", []check{{"speed", ">=", 1}}, nil},
	} {
		got := evaluate(tc.checks, fo)
		if tc.want == nil {
			require.Nil(t, got, tc.name)
		} else {
			require.NotNil(t, got, tc.name)
			require.Equal(t, *tc.want, *got, tc.name)
		}
	}
	noRatio := fo
	noRatio.Ratio = nil
	require.Nil(t, evaluate([]check{{"ratio", ">=", 0.1}}, noRatio), "a ratio check without a ratio is unknown")
	noBase := fo
	noBase.Baseline = &measure{}
	require.Nil(t, evaluate([]check{{"excess", "<=", 1}}, noBase), "an excess check without a baseline is unknown")
	notRun := fo
	notRun.Bgcmd = measure{}
	require.Nil(t, evaluate([]check{{"value", "<=", 1}}, notRun), "a figure that did not run meets nothing")
}

func TestBuildReportPairsEveryFigureWithItsBaselineFromTheRecordedRun(t *testing.T) {
	r := recorded(t)
	rep := buildReport(testMachine(), config{Benchtime: "200ms"}, r)
	require.Len(t, rep.Figures, len(figures))
	for i, f := range rep.Figures {
		def := figures[i]
		require.Empty(t, f.Missing, f.Name)
		require.True(t, f.Bgcmd.Found, f.Name)
		require.NotNil(t, f.Baseline, "%s has a baseline from the same run", f.Name)
		res := find(r, def.Bgcmd.Pkg, def.Bgcmd.Bench)
		require.Equal(t, res.Metrics[def.Bgcmd.Metric], f.Bgcmd.Value, f.Name)
		base := find(r, def.Baseline.Pkg, def.Baseline.Bench)
		require.Equal(t, base.Metrics[def.Baseline.Metric], f.Baseline.Value, f.Name)
		require.NotNil(t, f.Ratio, f.Name)
		want, ok := computeRatio(def.Ratio, f.Bgcmd.Value, f.Baseline.Value)
		require.True(t, ok)
		require.InDelta(t, want, *f.Ratio, 1e-12, f.Name)
		if len(def.Checks) > 0 {
			require.NotNil(t, f.Meets, "%s has a numeric aim and both numbers", f.Name)
		} else {
			require.Nil(t, f.Meets, f.Name)
		}
		if def.Floor != nil {
			fl := find(r, def.Floor.Pkg, def.Floor.Bench)
			require.True(t, f.Floor.Found, "%s: its floor is in the recorded run", f.Name)
			require.Equal(t, fl.Metrics[def.Floor.Metric], f.Floor.Value, f.Name)
			require.NotNil(t, f.FloorMeets, f.Name)
		} else {
			require.Nil(t, f.Floor, f.Name)
		}
	}
	for _, name := range []string{"Reconcile 1,000 orphaned jobs", "Prune 100,000 settled jobs with their files",
		"Capture, 1 MiB writes (dd bs=1M), against the pipe floor"} {
		f := figureByName(t, rep, name)
		require.NotNil(t, f.Bgcmd.Spread, "%s: a sampled benchmark shows its spread", name)
		require.NotNil(t, f.Baseline.Spread, "%s: so does its baseline", name)
		require.GreaterOrEqual(t, f.Bgcmd.Spread.Samples, 3, name)
		require.LessOrEqual(t, f.Bgcmd.Spread.Min, f.Bgcmd.Value, name)
		require.GreaterOrEqual(t, f.Bgcmd.Spread.Max, f.Bgcmd.Value, name)
	}
	require.Nil(t, figureByName(t, rep, "Policy check (50-entry allowlist, cwd 10 levels deep)").Bgcmd.Spread,
		"a benchmark without samples has no spread")
	// Only breakdowns stand outside the figures: the index stride
	// comparison, the capture's background work alone, the capture pair run
	// once each (for profiling; BenchmarkCaptureIndexing samples it for the
	// figure), and PostgreSQL's write lock taken in a round trip of its own
	// (the behaviour before).
	breakdowns := []string{"artifacts.BenchmarkReadPageStride/", "artifacts.BenchmarkDigest/",
		"artifacts.BenchmarkCapture", "internal/jobstore.BenchmarkTransitionsOneWriterPostgresLockApart/"}
	for _, u := range rep.Unpaired {
		known := false
		for _, prefix := range breakdowns {
			known = known || strings.HasPrefix(u, prefix)
		}
		require.True(t, known, "%s is part of no figure: give it one in figures.go", u)
	}
}

func TestAFigureWhoseBenchmarkDidNotRunIsNotMeasuredAndMeetsNothing(t *testing.T) {
	out := `pkg: github.com/bgcmd/bgcmd/policy
BenchmarkCheck-2   	   39477	     30200 ns/op
`
	r, err := parse(strings.NewReader(out), module)
	require.NoError(t, err)
	rep := buildReport(testMachine(), config{}, r)
	f := figureByName(t, rep, "Policy check (50-entry allowlist, cwd 10 levels deep)")
	require.True(t, f.Bgcmd.Found)
	require.False(t, f.Baseline.Found)
	require.Equal(t, "BenchmarkCheckBaselineEvalSymlinks ns/op", f.Missing)
	require.Nil(t, f.Ratio)
	require.NotNil(t, f.Meets, "the aim is on the value, which ran")
	require.True(t, *f.Meets)
	md := renderMarkdown(rep)
	require.Contains(t, md, "### Not measured")
	require.Contains(t, md, "- Policy check (50-entry allowlist, cwd 10 levels deep): no result for BenchmarkCheckBaselineEvalSymlinks ns/op in this run.")
}

func TestMarkdownShowsEachFigureItsSpreadAndWhetherItsAimIsMet(t *testing.T) {
	out := `pkg: github.com/bgcmd/bgcmd/runner
BenchmarkReconcile1000Orphans-2   	       1	2500000000 ns/op	      700 jobwise-ms/1000-orphans	     800 max-jobwise-ms/1000-orphans	     3000 max-ms/1000-orphans	3000000000 max-ns/op	      650 min-jobwise-ms/1000-orphans	     1500 min-ms/1000-orphans	1500000000 min-ns/op	     2500 ms/1000-orphans	         3 samples
BenchmarkCaptureLargeWrites-2     	       1	 900000000 ns/op	  1200 MB/s	  900 direct-MB/s	 20000 idle-peak-rss-KiB	1300 max-MB/s	1000 max-direct-MB/s	 20100 max-idle-peak-rss-KiB	950000000 max-ns/op	 30000 max-peak-rss-KiB	1600 max-pipe-MB/s	1100 min-MB/s	800 min-direct-MB/s	 19900 min-idle-peak-rss-KiB	850000000 min-ns/op	 29000 min-peak-rss-KiB	1400 min-pipe-MB/s	 40000 peak-rss-KiB	1500 pipe-MB/s	3 samples
pkg: github.com/bgcmd/bgcmd/policy
BenchmarkCheck-2   	   39477	     30200 ns/op
BenchmarkCheckBaselineEvalSymlinks-2   	   39477	     10000 ns/op
`
	r, err := parse(strings.NewReader(out), module)
	require.NoError(t, err)
	rep := buildReport(testMachine(), config{Benchtime: "200ms", CaptureMB: 64, LogMB: 64, Packages: []string{"./..."}}, r)

	reconcile := figureByName(t, rep, "Reconcile 1,000 orphaned jobs")
	require.Equal(t, &spread{Min: 1500, Max: 3000, Samples: 3}, reconcile.Bgcmd.Spread)
	require.InDelta(t, 2500.0/700, *reconcile.Ratio, 1e-12, "the ratio is that of the medians")
	require.False(t, *reconcile.Meets, "2.5 s misses the 2 s aim")

	capture := figureByName(t, rep, "Capture, 1 MiB writes (dd bs=1M), against the pipe floor")
	require.InDelta(t, 0.8, *capture.Ratio, 1e-12)
	require.True(t, *capture.Meets, "1,200 MB/s meets ≥ 1 GB/s")
	rss := figureByName(t, rep, "Detached supervisor peak RSS over one capture (1 MiB writes)")
	require.InDelta(t, 2.0, *rss.Ratio, 1e-12)
	require.False(t, *rss.Meets, "20,000 KiB over the idle supervisor is more than 16 MiB")
	require.True(t, *figureByName(t, rep, "Policy check (50-entry allowlist, cwd 10 levels deep)").Meets)

	md := renderMarkdown(rep)
	lines := strings.Split(md, "\n")
	row := func(name string) string {
		for _, l := range lines {
			if strings.Contains(l, "| "+name+" |") {
				return l
			}
		}
		t.Fatalf("no row for %q in\n%s", name, md)
		return ""
	}
	require.Contains(t, md, "**Machine:** 2 cores (GOMAXPROCS 2), Test CPU, linux/amd64, Linux 6.0, 1024 MiB RAM; go1.99; 2026-01-02T03:04:05Z.")
	require.Contains(t, md, "capture size 64 MiB")
	require.Contains(t, md, "figures: 2 meet their aim, 2 miss it,")
	require.Equal(t, "| durability | Reconcile 1,000 orphaned jobs | 2,500 ms/1000-orphans (min 1,500, max 3,000, 3 samples) <sub>runner/Reconcile1000Orphans</sub> | "+
		"700 jobwise-ms/1000-orphans (min 650, max 800, 3 samples) <sub>runner/Reconcile1000Orphans</sub> | 3.57× baseline time | "+
		figures[indexOf(t, "Reconcile 1,000 orphaned jobs")].Aim+" | **no** |", row("Reconcile 1,000 orphaned jobs"))
	require.Contains(t, row("Capture, 1 MiB writes (dd bs=1M), against the pipe floor"), "| 80.0% of baseline speed |")
	require.True(t, strings.HasSuffix(row("Capture, 1 MiB writes (dd bs=1M), against the pipe floor"), "| yes; its floor: yes (1,500 pipe-MB/s) |"),
		"the aim is on the value, so the floor's value is shown: %s", row("Capture, 1 MiB writes (dd bs=1M), against the pipe floor"))
	require.Contains(t, row("Detached supervisor peak RSS over one capture (1 MiB writes)"), "| 2.00× baseline size |")
	require.Contains(t, row("Prune 100,000 settled jobs with their files"), "| not measured |")
	require.Contains(t, md, "| runner | BenchmarkReconcile1000Orphans | 1 | 2.50 s/op (min 1.50 s, max 3.00 s, 3 samples), 700 jobwise-ms/1000-orphans (min 650, max 800, 3 samples), 2,500 ms/1000-orphans (min 1,500, max 3,000, 3 samples), 3 samples |")
	require.NotContains(t, md, "min-ms/1000-orphans", "the range is shown with its median, not as metrics of its own")
}

// TestAMissedAimSaysWhetherItsOwnFloorMeetsIt: a figure with a floor
// runs its aim's checks on the floor too, against the same baseline, and
// the report counts the misses that the floor misses as well (out of
// reach on this machine) apart from those that are bgcmd's own gap.
func TestAMissedAimSaysWhetherItsOwnFloorMeetsIt(t *testing.T) {
	out := `pkg: github.com/bgcmd/bgcmd/soak
BenchmarkCLIRun-2   	       1	 40000000 ns/op	 40.0 median-ms	 2.00 raw-median-ms	 30.0 floor-median-ms	 31.0 linked-floor-median-ms
pkg: github.com/bgcmd/bgcmd/runner
BenchmarkLifecycleInTurn-2   	       1	 5000000 ns/op	 2000000 raw-ns/op	 3000000 floor-ns/op
BenchmarkPrune-2   	       1	 8000000000 ns/op	 12000 jobs/s	 40000 floor-jobs/s
`
	r, err := parse(strings.NewReader(out), module)
	require.NoError(t, err)
	rep := buildReport(testMachine(), config{}, r)

	run := figureByName(t, rep, "`bgcmd run -- /bin/true` until it returns, median")
	require.False(t, *run.Meets, "20× raw misses ≤ 10×")
	require.NotNil(t, run.Floor)
	require.Equal(t, 30.0, run.Floor.Value)
	require.InDelta(t, 15.0, *run.FloorRatio, 1e-12, "the floor's ratio is to the same baseline, raw exec")
	require.False(t, *run.FloorMeets, "15× raw misses ≤ 10× too: out of reach here")

	life := figureByName(t, rep, "Start overhead: /bin/true lifecycle, sequential")
	require.False(t, *life.Meets, "2.5× raw misses ≤ 2.0×")
	require.InDelta(t, 1.5, *life.FloorRatio, 1e-12)
	require.True(t, *life.FloorMeets, "the floor at 1.5× raw meets it: the gap is bgcmd's")

	prune := figureByName(t, rep, "Prune 100,000 settled jobs with their files")
	require.False(t, *prune.Meets)
	require.True(t, *prune.FloorMeets, "40,000 jobs/s meets ≥ 30,000: the check is on the value")

	md := renderMarkdown(rep)
	require.Contains(t, md, "figures: 0 meet their aim, 4 miss it (1 of them an aim that its own floor, measured in the same run, misses too: out of reach on this machine),")
	lines := strings.Split(md, "\n")
	row := func(name string) string {
		for _, l := range lines {
			if strings.Contains(l, "| "+name+" |") {
				return l
			}
		}
		t.Fatalf("no row for %q", name)
		return ""
	}
	require.True(t, strings.HasSuffix(row(run.Name), "| **no**; its floor: no (15.0× baseline time) |"), row(run.Name))
	require.True(t, strings.HasSuffix(row(life.Name), "| **no**; its floor: yes (1.50× baseline time) |"), row(life.Name))
	require.True(t, strings.HasSuffix(row(prune.Name), "| **no**; its floor: yes (40,000 floor-jobs/s) |"), row(prune.Name))
	require.True(t, strings.HasSuffix(row("`bgcmd run -- /bin/true` until it returns, against its floor, median"), "| **no** |"),
		"a figure without a floor of its own says nothing more")

	noFloor := `pkg: github.com/bgcmd/bgcmd/runner
BenchmarkLifecycleInTurn-2   	       1	 5000000 ns/op	 2000000 raw-ns/op
`
	r, err = parse(strings.NewReader(noFloor), module)
	require.NoError(t, err)
	life = figureByName(t, buildReport(testMachine(), config{}, r), life.Name)
	require.False(t, *life.Meets)
	require.False(t, life.Floor.Found)
	require.Nil(t, life.FloorMeets, "a floor the run did not measure says nothing")
	require.Empty(t, life.Missing, "the figure itself is measured")
}

func indexOf(t *testing.T, name string) int {
	for i, f := range figures {
		if f.Name == name {
			return i
		}
	}
	t.Fatalf("no figure %q", name)
	return -1
}

// TestEveryFigureNamesABenchmarkThatExists keeps figures.go in step with
// the benchmarks: a renamed benchmark would otherwise leave its figure
// "not measured" without anyone noticing until a full run.
func TestEveryFigureNamesABenchmarkThatExists(t *testing.T) {
	exists := map[string]bool{}
	fset := token.NewFileSet()
	for _, pkg := range []string{"artifacts", "internal/jobstore", "policy", "runner", "soak", "webui", "cmd/bgcmd"} {
		files, err := filepath.Glob(filepath.Join("..", "..", pkg, "*_test.go"))
		require.NoError(t, err)
		for _, file := range files {
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Benchmark") {
					exists[key(pkg, fn.Name.Name)] = true
				}
			}
		}
	}
	// A sub-benchmark (BenchmarkX/case) exists when its function does.
	fn := func(bench string) string { return strings.SplitN(bench, "/", 2)[0] }
	for _, f := range figures {
		require.True(t, exists[key(f.Bgcmd.Pkg, fn(f.Bgcmd.Bench))], "%s: no %s in %s", f.Name, f.Bgcmd.Bench, f.Bgcmd.Pkg)
		require.NotNil(t, f.Baseline, "%s has a baseline", f.Name)
		require.True(t, exists[key(f.Baseline.Pkg, fn(f.Baseline.Bench))], "%s: no %s in %s", f.Name, f.Baseline.Bench, f.Baseline.Pkg)
		if f.Floor != nil {
			require.True(t, exists[key(f.Floor.Pkg, fn(f.Floor.Bench))], "%s: no %s in %s", f.Name, f.Floor.Bench, f.Floor.Pkg)
			require.NotEmpty(t, f.Checks, "%s: a floor is there to be checked against the aim", f.Name)
		}
	}
}
