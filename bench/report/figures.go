package main

// This file is the one place that says which benchmark is paired with which
// baseline, how their ratio reads, and what bgcmd aims for. Every number
// in the report comes from the run; only these pairings and the aims are
// written here.

// ref names one metric of one benchmark: the package's import path relative
// to the module ("runner", "soak", …), the benchmark's name without the
// -GOMAXPROCS suffix, and the unit as the benchmark prints it ("ns/op",
// "MB/s", "jobs/s", or a custom ReportMetric unit).
type ref struct {
	Pkg    string `json:"package"`
	Bench  string `json:"benchmark"`
	Metric string `json:"metric"`
}

// ratioKind says how a figure's ratio is computed and read.
type ratioKind int

const (
	// ratioCost is bgcmd ÷ baseline of a time (ns/op, ms): "× the baseline's
	// time", lower is better.
	ratioCost ratioKind = iota
	// ratioShare is bgcmd ÷ baseline of a throughput (MB/s, jobs/s): "of the
	// baseline's speed", higher is better.
	ratioShare
	// ratioSpeedup is baseline ÷ bgcmd of a time: "× faster than the
	// baseline", higher is better.
	ratioSpeedup
	// ratioFraction is bgcmd ÷ baseline where the baseline is a size the
	// bgcmd number is compared with (memory growth ÷ output size).
	ratioFraction
)

func (k ratioKind) label() string {
	switch k {
	case ratioShare:
		return "of baseline speed"
	case ratioSpeedup:
		return "faster than baseline"
	case ratioFraction:
		return "of baseline"
	}
	return "× baseline time"
}

// check is one aim expressed as a test on the run's numbers.
type check struct {
	// On is "value" (the bgcmd number, in its metric's unit) or "ratio".
	On string `json:"on"`
	// Op is "<=" or ">=".
	Op    string  `json:"op"`
	Limit float64 `json:"limit"`
}

// figure pairs one bgcmd number with the baseline measured in the same run.
type figure struct {
	Area  string
	Name  string
	Bgcmd ref
	// Baseline is nil for a figure bgcmd's aims ask for with no baseline of
	// its own kind; Derived then names how the comparison is made.
	Baseline *ref
	// Derived, when set, computes the baseline from the bgcmd benchmark's
	// own line (e.g. the bytes per op behind an RSS figure).
	Derived string
	Ratio   ratioKind
	// Aim is the aim in words; Checks encode them where they are numbers.
	Aim    string
	Checks []check
}

// derivedBytesKiB derives the output size (KiB) of one op from a benchmark
// that called b.SetBytes: MB/s × ns/op.
const derivedBytesKiB = "bytes-per-op-KiB"

var figures = []figure{
	// the job store.
	{Area: "store", Name: "Store transitions, one writer",
		Bgcmd:    ref{"jobstore", "BenchmarkTransitionsOneWriter", "transitions/s"},
		Baseline: &ref{"jobstore", "BenchmarkRawInsertBaseline", "transitions/s"},
		Ratio:    ratioShare, Aim: "report transitions/s for one writer"},
	{Area: "store", Name: "Store transitions, 8 writing processes",
		Bgcmd:    ref{"jobstore", "BenchmarkTransitionsEightProcesses", "transitions/s"},
		Baseline: &ref{"jobstore", "BenchmarkRawInsertBaseline", "transitions/s"},
		Ratio:    ratioShare, Aim: "report transitions/s with 8 processes on one file"},
	{Area: "store", Name: "List 50 newest failed jobs at 1,000,000 jobs",
		Bgcmd:    ref{"jobstore", "BenchmarkList50FailedAtMillion", "µs/op"},
		Baseline: &ref{"jobstore", "BenchmarkCountersFullScanBaseline", "µs/op"},
		Ratio:    ratioSpeedup, Aim: "under 1 ms at a million jobs (baseline: a full scan of the same table)",
		Checks: []check{{"value", "<=", 1000}}},
	{Area: "store", Name: "Session counters at 1,000,000 jobs",
		Bgcmd:    ref{"jobstore", "BenchmarkCountersAtMillion", "µs/op"},
		Baseline: &ref{"jobstore", "BenchmarkCountersFullScanBaseline", "µs/op"},
		Ratio:    ratioSpeedup, Aim: "under 1 ms at a million jobs",
		Checks: []check{{"value", "<=", 1000}}},
	{Area: "store", Name: "Hash-chained transition vs the same statements unchained",
		Bgcmd:    ref{"jobstore", "BenchmarkChainTransitions", "µs/transition"},
		Baseline: &ref{"jobstore", "BenchmarkChainTransitions", "baseline_µs/transition"},
		Ratio:    ratioCost, Aim: "the chain costs under 2× the transition's own statements",
		Checks: []check{{"ratio", "<=", 2}}},
	{Area: "store", Name: "verify --chain over 1,000,000 events",
		Bgcmd:    ref{"jobstore", "BenchmarkVerifyChainMillionEvents", "s/verify"},
		Baseline: &ref{"jobstore", "BenchmarkVerifyChainMillionEvents", "baseline_s/scan"},
		Ratio:    ratioCost, Aim: "seconds, not minutes (under 60 s; baseline: reading the same rows unhashed)",
		Checks: []check{{"value", "<=", 60}}},
	{Area: "runner", Name: "Executable sha256 at start, cached",
		Bgcmd:    ref{"runner", "BenchmarkExeHashAtStart/cached", "µs/hash"},
		Baseline: &ref{"runner", "BenchmarkExeHashAtStart/cached", "baseline_µs/exec"},
		Ratio:    ratioCost, Aim: "under 10% of an exec of /bin/true",
		Checks: []check{{"ratio", "<=", 0.1}}},
	{Area: "runner", Name: "Executable sha256 at start, uncached (10 MiB binary)",
		Bgcmd:    ref{"runner", "BenchmarkExeHashAtStart/uncached", "µs/hash"},
		Baseline: &ref{"runner", "BenchmarkExeHashAtStart/uncached", "baseline_µs/exec"},
		Ratio:    ratioCost, Aim: "report: one read of the file"},

	// the policy.
	{Area: "policy", Name: "Policy check (50-entry allowlist, cwd 10 levels deep)",
		Bgcmd:    ref{"policy", "BenchmarkCheck", "ns/op"},
		Baseline: &ref{"policy", "BenchmarkCheckBaselineStat", "ns/op"},
		Ratio:    ratioCost, Aim: "costs microseconds (under 100 µs)",
		Checks: []check{{"value", "<=", 100_000}}},

	// the runner.
	{Area: "runner", Name: "Start overhead: /bin/true lifecycle, sequential",
		Bgcmd:    ref{"runner", "BenchmarkLifecycleTrue", "ns/op"},
		Baseline: &ref{"runner", "BenchmarkRawExecTrue", "ns/op"},
		Ratio:    ratioCost, Aim: "≤ 1.5× raw exec",
		Checks: []check{{"ratio", "<=", 1.5}}},
	{Area: "runner", Name: "Start throughput: /bin/true lifecycle, 4 starters",
		Bgcmd:    ref{"runner", "BenchmarkLifecycleTrueConcurrent4", "jobs/s"},
		Baseline: &ref{"soak", "BenchmarkRawExecTrueConcurrent4", "jobs/s"},
		Ratio:    ratioShare, Aim: "≥ 1,000 jobs/s with 4 starting concurrently",
		Checks: []check{{"value", ">=", 1000}}},
	{Area: "runner", Name: "Capture, small writes (head -c)",
		Bgcmd:    ref{"runner", "BenchmarkCaptureSmallWrites", "MB/s"},
		Baseline: &ref{"runner", "BenchmarkDirectFileSmallWrites", "MB/s"},
		Ratio:    ratioShare, Aim: "≥ 80% of the direct speed",
		Checks: []check{{"ratio", ">=", 0.8}}},
	{Area: "runner", Name: "Capture, 1 MiB writes (dd bs=1M)",
		Bgcmd:    ref{"runner", "BenchmarkCaptureLargeWrites", "MB/s"},
		Baseline: &ref{"runner", "BenchmarkDirectFileLargeWrites", "MB/s"},
		Ratio:    ratioShare, Aim: "≥ 1 GB/s",
		Checks: []check{{"value", ">=", 1000}}},
	{Area: "runner", Name: "Supervisor RSS growth over one capture (1 MiB writes)",
		Bgcmd:   ref{"runner", "BenchmarkCaptureLargeWrites", "rss-growth-KiB"},
		Derived: derivedBytesKiB,
		Ratio:   ratioFraction, Aim: "memory does not grow with output size (RSS growth under 16 MiB for the whole output)",
		Checks: []check{{"value", "<=", 16 << 10}}},
	{Area: "runner", Name: "Supervisor RSS growth over one capture (small writes)",
		Bgcmd:   ref{"runner", "BenchmarkCaptureSmallWrites", "rss-growth-KiB"},
		Derived: derivedBytesKiB,
		Ratio:   ratioFraction, Aim: "memory does not grow with output size (RSS growth under 16 MiB for the whole output)",
		Checks: []check{{"value", "<=", 16 << 10}}},

	// detached supervision.
	{Area: "durability", Name: "`bgcmd run -- /bin/true` until it returns, median",
		Bgcmd:    ref{"soak", "BenchmarkCLIRun", "median-ms"},
		Baseline: &ref{"soak", "BenchmarkCLIRun", "raw-median-ms"},
		Ratio:    ratioCost, Aim: "median under 15 ms",
		Checks: []check{{"value", "<=", 15}}},
	{Area: "durability", Name: "`bgcmd run -- /bin/true` until it returns, p90",
		Bgcmd:    ref{"soak", "BenchmarkCLIRun", "p90-ms"},
		Baseline: &ref{"soak", "BenchmarkCLIRun", "raw-p90-ms"},
		Ratio:    ratioCost, Aim: "(reported beside the median)"},
	{Area: "durability", Name: "runner.Start, detached, until it returns",
		Bgcmd:    ref{"runner", "BenchmarkDetachedStart", "ns/op"},
		Baseline: &ref{"runner", "BenchmarkRawExecTrue", "ns/op"},
		Ratio:    ratioCost, Aim: "(the library's share of the above)"},
	{Area: "durability", Name: "Reconcile 1,000 orphaned jobs",
		Bgcmd:    ref{"runner", "BenchmarkReconcile1000Orphans", "ms/1000-orphans"},
		Baseline: &ref{"soak", "BenchmarkSettle1000RawBaseline", "ms/1000-jobs"},
		Ratio:    ratioCost, Aim: "under 2 s",
		Checks: []check{{"value", "<=", 2000}}},

	// artifacts.
	{Area: "output", Name: "Read a page at 99.9% of a big log, by chars",
		Bgcmd:    ref{"artifacts", "BenchmarkReadPageChars", "ns/op"},
		Baseline: &ref{"artifacts", "BenchmarkScanChars", "ns/op"},
		Ratio:    ratioSpeedup, Aim: "under 0.1 ms per page and over 1,000× faster than the scan",
		Checks: []check{{"value", "<=", 100_000}, {"ratio", ">=", 1000}}},
	{Area: "output", Name: "Read a page at 99.9% of a big log, by lines",
		Bgcmd:    ref{"artifacts", "BenchmarkReadPageLines", "ns/op"},
		Baseline: &ref{"artifacts", "BenchmarkScanLines", "ns/op"},
		Ratio:    ratioSpeedup, Aim: "under 0.1 ms per page and over 1,000× faster than the scan",
		Checks: []check{{"value", "<=", 100_000}, {"ratio", ">=", 1000}}},
	{Area: "output", Name: "Indexing overhead on capture throughput",
		Bgcmd:    ref{"artifacts", "BenchmarkCapture", "MB/s"},
		Baseline: &ref{"artifacts", "BenchmarkCaptureBaselineFile", "MB/s"},
		Ratio:    ratioShare, Aim: "overhead under 15% (≥ 85% of the plain file write)",
		Checks: []check{{"ratio", ">=", 0.85}}},

	// retention (list latency at a million jobs is the store's figure).
	{Area: "retention", Name: "Prune 100,000 settled jobs with their files",
		Bgcmd:    ref{"runner", "BenchmarkPrune", "jobs/s"},
		Baseline: &ref{"runner", "BenchmarkPrune", "baseline_rows/s"},
		Ratio:    ratioShare, Aim: "report jobs/s (baseline: one plain DELETE of as many rows)"},
}
