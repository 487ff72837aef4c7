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
	// ratioSize is bgcmd ÷ baseline of a size (peak RSS): "× the baseline's
	// size", lower is better.
	ratioSize
	// ratioCount is bgcmd ÷ baseline of a count of events (page faults):
	// "× the baseline's count", lower is better.
	ratioCount
)

func (k ratioKind) label() string {
	switch k {
	case ratioShare:
		return "of baseline speed"
	case ratioSpeedup:
		return "faster than baseline"
	case ratioSize:
		return "× baseline size"
	case ratioCount:
		return "× baseline count"
	}
	return "× baseline time"
}

// check is one aim expressed as a test on the run's numbers.
type check struct {
	// On is "value" (the bgcmd number, in its metric's unit), "ratio", or
	// "excess" (the bgcmd number minus the baseline's, in their unit).
	On string `json:"on"`
	// Op is "<=" or ">=".
	Op    string  `json:"op"`
	Limit float64 `json:"limit"`
}

// figure pairs one bgcmd number with the baseline measured in the same run.
// A benchmark that ran several samples reports each metric's median under
// its unit and the spread as min-<unit> and max-<unit>; the report shows
// the spread beside the median and computes the ratio of the medians.
type figure struct {
	Area     string
	Name     string
	Bgcmd    ref
	Baseline *ref
	Ratio    ratioKind
	// Aim is the aim in words; Checks encode them where they are numbers.
	Aim    string
	Checks []check
	// Floor, where set, is the least the same work costs on this machine,
	// measured in the same run (a floor program's metric, in Bgcmd's
	// unit). The report runs Checks on it too, in bgcmd's place and
	// against the same baseline, so that a missed aim says whether the
	// machine allows it at all: an aim its own floor misses is out of
	// reach here, whatever bgcmd does.
	Floor *ref
}

var figures = []figure{
	// the job store.
	{Area: "store", Name: "Store transitions, one writer",
		Bgcmd:    ref{"internal/jobstore", "BenchmarkTransitionsOneWriter", "transitions/s"},
		Baseline: &ref{"internal/jobstore", "BenchmarkTransitionsOneWriterRawBaseline", "transitions/s"},
		Ratio:    ratioShare, Aim: "report transitions/s for one writer (baseline: the store's statements on the same schema, no store code)"},
	{Area: "store", Name: "Store transitions, 8 writing processes",
		Bgcmd:    ref{"internal/jobstore", "BenchmarkTransitionsEightProcesses", "transitions/s"},
		Baseline: &ref{"internal/jobstore", "BenchmarkTransitionsEightProcessesRawBaseline", "transitions/s"},
		Ratio:    ratioShare, Aim: "report transitions/s with 8 processes on one file (baseline: 8 processes running the same statements)"},
	{Area: "store", Name: "Store transitions on PostgreSQL, one writer, beside SQLite",
		Bgcmd:    ref{"internal/jobstore", "BenchmarkTransitionsOneWriterPostgres/postgres", "transitions/s"},
		Baseline: &ref{"internal/jobstore", "BenchmarkTransitionsOneWriter", "transitions/s"},
		Ratio:    ratioShare, Aim: "report (the throwaway server of make pg, on this machine; runs when BGCMD_TEST_PG is set; baseline: the same store code on SQLite)"},
	{Area: "store", Name: "Store transitions on PostgreSQL, 8 writing processes, beside SQLite",
		Bgcmd:    ref{"internal/jobstore", "BenchmarkTransitionsEightProcessesPostgres/postgres", "transitions/s"},
		Baseline: &ref{"internal/jobstore", "BenchmarkTransitionsEightProcesses", "transitions/s"},
		Ratio:    ratioShare, Aim: "report (8 processes on one PostgreSQL database; baseline: 8 processes on one SQLite file)"},
	{Area: "store", Name: "List 50 newest failed jobs at 1,000,000 jobs",
		Bgcmd:    ref{"internal/jobstore", "BenchmarkList50FailedAtMillion", "µs/op"},
		Baseline: &ref{"internal/jobstore", "BenchmarkList50FailedFullScanBaseline", "µs/op"},
		Ratio:    ratioSpeedup, Aim: "under 1 ms at a million jobs (baseline: the same SELECT, NOT INDEXED)",
		Checks: []check{{"value", "<=", 1000}}},
	{Area: "store", Name: "Session counters at 1,000,000 jobs",
		Bgcmd:    ref{"internal/jobstore", "BenchmarkCountersAtMillion", "µs/op"},
		Baseline: &ref{"internal/jobstore", "BenchmarkCountersFullScanBaseline", "µs/op"},
		Ratio:    ratioSpeedup, Aim: "under 1 ms at a million jobs (baseline: counting the session's jobs, NOT INDEXED)",
		Checks: []check{{"value", "<=", 1000}}},
	{Area: "store", Name: "Session counters, a session of 100,000 unread jobs",
		Bgcmd:    ref{"internal/jobstore", "BenchmarkCountersBigSession", "µs/op"},
		Baseline: &ref{"internal/jobstore", "BenchmarkCountersBigSessionCountBaseline", "µs/op"},
		Ratio:    ratioSpeedup, Aim: "under 100 µs whatever the session's unread jobs: what every status, await and MCP result pays (baseline: counting the session's jobs on the partial indexes, as before session_counters)",
		Checks: []check{{"value", "<=", 100}}},
	{Area: "store", Name: "Event feed poll for the settle just committed, a session of 100,000 jobs",
		Bgcmd:    ref{"internal/jobstore", "BenchmarkEventsPollBigSession", "µs/op"},
		Baseline: &ref{"internal/jobstore", "BenchmarkEventsPollBigSessionPlannerBaseline", "µs/op"},
		Ratio:    ratioSpeedup, Aim: "under 1 ms whatever the session's size: what each settle costs an MCP server or `events --follow` that watches the session (baseline: the same SELECT in the planner's own join order, from the session's jobs)",
		Checks: []check{{"value", "<=", 1000}}},
	{Area: "store", Name: "List 50 newest failed jobs at 1,000,000 jobs on PostgreSQL, beside SQLite",
		Bgcmd:    ref{"internal/jobstore", "BenchmarkList50FailedAtMillionPostgres", "µs/op"},
		Baseline: &ref{"internal/jobstore", "BenchmarkList50FailedAtMillion", "µs/op"},
		Ratio:    ratioCost, Aim: "report (the throwaway server of make pg; runs when BGCMD_TEST_PG is set; baseline: the same store code on SQLite)"},
	{Area: "store", Name: "Session counters at 1,000,000 jobs on PostgreSQL, beside SQLite",
		Bgcmd:    ref{"internal/jobstore", "BenchmarkCountersAtMillionPostgres", "µs/op"},
		Baseline: &ref{"internal/jobstore", "BenchmarkCountersAtMillion", "µs/op"},
		Ratio:    ratioCost, Aim: "report (the same million jobs on PostgreSQL, counted from jobs; baseline: SQLite, a row of session_counters)"},
	{Area: "store", Name: "Hash-chained transition vs the same statements unchained",
		Bgcmd:    ref{"internal/jobstore", "BenchmarkChainTransitions", "µs/transition"},
		Baseline: &ref{"internal/jobstore", "BenchmarkChainTransitions", "baseline_µs/transition"},
		Ratio:    ratioCost, Aim: "the chain costs under 2× the transition's own statements",
		Checks: []check{{"ratio", "<=", 2}}},
	{Area: "store", Name: "verify --chain over 1,000,000 events",
		Bgcmd:    ref{"internal/jobstore", "BenchmarkVerifyChainMillionEvents", "s/verify"},
		Baseline: &ref{"internal/jobstore", "BenchmarkVerifyChainMillionEvents", "baseline_s/scan"},
		Ratio:    ratioCost, Aim: "seconds, not minutes (under 60 s; baseline: reading the same rows unhashed)",
		Checks: []check{{"value", "<=", 60}}},
	{Area: "runner", Name: "Executable sha256 at start, cached",
		Bgcmd:    ref{"runner", "BenchmarkExeHashAtStart/cached", "µs/hash"},
		Baseline: &ref{"runner", "BenchmarkExeHashAtStart/cached", "baseline_µs/exec"},
		Ratio:    ratioCost, Aim: "under 10% of an exec of /bin/true",
		Checks: []check{{"ratio", "<=", 0.1}}},
	{Area: "runner", Name: "Executable sha256 at start, cached in the home (a new process, as every `bgcmd run`)",
		Bgcmd:    ref{"runner", "BenchmarkExeHashAtStart/home", "µs/hash"},
		Baseline: &ref{"runner", "BenchmarkExeHashAtStart/home", "baseline_µs/exec"},
		Ratio:    ratioCost, Aim: "under 10% of an exec of /bin/true",
		Checks: []check{{"ratio", "<=", 0.1}}},
	{Area: "runner", Name: "Executable sha256 at start, uncached (10 MiB binary)",
		Bgcmd:    ref{"runner", "BenchmarkExeHashAtStart/uncached", "µs/hash"},
		Baseline: &ref{"runner", "BenchmarkExeHashAtStart/uncached", "baseline_µs/exec"},
		Ratio:    ratioCost, Aim: "report: one read of the file"},

	// the policy.
	{Area: "policy", Name: "Policy check (50-entry allowlist, cwd 10 levels deep)",
		Bgcmd:    ref{"policy", "BenchmarkCheck", "ns/op"},
		Baseline: &ref{"policy", "BenchmarkCheckBaselineEvalSymlinks", "ns/op"},
		Ratio:    ratioCost, Aim: "costs microseconds (under 100 µs); baseline: filepath.EvalSymlinks of the same cwd",
		Checks: []check{{"value", "<=", 100_000}}},

	// the runner.
	{Area: "runner", Name: "Start overhead: /bin/true lifecycle, sequential",
		Bgcmd:    ref{"runner", "BenchmarkLifecycleInTurn", "ns/op"},
		Baseline: &ref{"runner", "BenchmarkLifecycleInTurn", "raw-ns/op"},
		Ratio:    ratioCost, Aim: "≤ 2.0× raw exec (in-process: each job under its reaper process; BenchmarkContainmentCost reports the reaper's share; blocks of bgcmd's jobs and of raw execs in turn)",
		Checks: []check{{"ratio", "<=", 2.0}},
		Floor:  &ref{"runner", "BenchmarkLifecycleInTurn", "floor-ns/op"}},
	{Area: "runner", Name: "Start overhead: /bin/true lifecycle, sequential, against its floor",
		Bgcmd:    ref{"runner", "BenchmarkLifecycleInTurn", "ns/op"},
		Baseline: &ref{"runner", "BenchmarkLifecycleInTurn", "floor-ns/op"},
		Ratio:    ratioCost, Aim: "(reported beside raw exec; floor: on bgcmd's schema, one prepared transaction writing the row and its event, the command with its output piped and drained, one settling it)"},
	{Area: "runner", Name: "/bin/true lifecycle on PostgreSQL, sequential, beside SQLite",
		Bgcmd:    ref{"runner", "BenchmarkLifecycleTruePostgres", "ns/op"},
		Baseline: &ref{"runner", "BenchmarkLifecycleTrue", "ns/op"},
		Ratio:    ratioCost, Aim: "report (every transition a transaction on the throwaway server of make pg; runs when BGCMD_TEST_PG is set; baseline: the same lifecycle on SQLite)"},
	{Area: "runner", Name: "Start throughput: /bin/true lifecycle, 4 starters",
		Bgcmd:    ref{"runner", "BenchmarkLifecycleConcurrent4InTurn", "jobs/s"},
		Baseline: &ref{"runner", "BenchmarkLifecycleConcurrent4InTurn", "raw-jobs/s"},
		Ratio:    ratioShare, Aim: "≥ 45% of raw exec's jobs/s with 4 starting concurrently (rounds of bgcmd's jobs and of raw execs in turn)",
		Checks: []check{{"ratio", ">=", 0.45}}},
	{Area: "runner", Name: "Capture, small writes (head -c), against the pipe floor",
		Bgcmd:    ref{"runner", "BenchmarkCaptureSmallWrites", "MB/s"},
		Baseline: &ref{"runner", "BenchmarkCaptureSmallWrites", "pipe-MB/s"},
		Ratio:    ratioShare, Aim: "≥ 80% of the floor's speed (the command → a pipe → io.Copy → a new file, with bgcmd's writeback and drop-behind, fsynced)",
		Checks: []check{{"ratio", ">=", 0.8}}},
	{Area: "runner", Name: "Capture, small writes (head -c), against the hashing floor",
		Bgcmd:    ref{"runner", "BenchmarkCaptureSmallWrites", "MB/s"},
		Baseline: &ref{"runner", "BenchmarkCaptureSmallWrites", "hashed-MB/s"},
		Ratio:    ratioShare, Aim: "≥ 90% of the floor's speed (the pipe floor plus the sha256 of every byte, taken by a second goroutine beside the copy)",
		Checks: []check{{"ratio", ">=", 0.9}}},
	{Area: "runner", Name: "Capture, small writes (head -c), CPU per GiB against the hashing floor",
		Bgcmd:    ref{"runner", "BenchmarkCaptureSmallWrites", "cpu-s/GiB"},
		Baseline: &ref{"runner", "BenchmarkCaptureSmallWrites", "hashed-cpu-s/GiB"},
		Ratio:    ratioCost, Aim: "≥ 90% of the floor's efficiency: ≤ 1.11× its CPU seconds per GiB (the supervisor's CPU, all its threads: bgcmd-supervisor as make build builds it; the floor's copy and hash)",
		Checks: []check{{"ratio", "<=", 1 / 0.9}}},
	{Area: "runner", Name: "Capture, small writes (head -c), against a direct file",
		Bgcmd:    ref{"runner", "BenchmarkCaptureSmallWrites", "MB/s"},
		Baseline: &ref{"runner", "BenchmarkCaptureSmallWrites", "direct-MB/s"},
		Ratio:    ratioShare, Aim: "(reported beside the pipe floor: the command writing straight into a new file, fsynced)"},
	{Area: "runner", Name: "Capture, 1 MiB writes (dd bs=1M), against the pipe floor",
		Bgcmd:    ref{"runner", "BenchmarkCaptureLargeWrites", "MB/s"},
		Baseline: &ref{"runner", "BenchmarkCaptureLargeWrites", "pipe-MB/s"},
		Ratio:    ratioShare, Aim: "≥ 1 GB/s (floor: dd → a pipe → io.Copy → a new file, with bgcmd's writeback and drop-behind, fsynced)",
		Checks: []check{{"value", ">=", 1000}},
		Floor:  &ref{"runner", "BenchmarkCaptureLargeWrites", "pipe-MB/s"}},
	{Area: "runner", Name: "Capture, 1 MiB writes (dd bs=1M), against the hashing floor",
		Bgcmd:    ref{"runner", "BenchmarkCaptureLargeWrites", "MB/s"},
		Baseline: &ref{"runner", "BenchmarkCaptureLargeWrites", "hashed-MB/s"},
		Ratio:    ratioShare, Aim: "≥ 90% of the floor's speed (the pipe floor plus the sha256 of every byte, taken by a second goroutine beside the copy)",
		Checks: []check{{"ratio", ">=", 0.9}}},
	{Area: "runner", Name: "Capture, 1 MiB writes (dd bs=1M), CPU per GiB against the hashing floor",
		Bgcmd:    ref{"runner", "BenchmarkCaptureLargeWrites", "cpu-s/GiB"},
		Baseline: &ref{"runner", "BenchmarkCaptureLargeWrites", "hashed-cpu-s/GiB"},
		Ratio:    ratioCost, Aim: "≥ 90% of the floor's efficiency: ≤ 1.11× its CPU seconds per GiB (the supervisor's CPU, all its threads: bgcmd-supervisor as make build builds it; the floor's copy and hash)",
		Checks: []check{{"ratio", "<=", 1 / 0.9}}},
	{Area: "runner", Name: "Capture, 1 MiB writes (dd bs=1M), against a direct file",
		Bgcmd:    ref{"runner", "BenchmarkCaptureLargeWrites", "MB/s"},
		Baseline: &ref{"runner", "BenchmarkCaptureLargeWrites", "direct-MB/s"},
		Ratio:    ratioShare, Aim: "(reported beside the pipe floor: dd writing straight into a new file, fsynced)"},
	{Area: "runner", Name: "Detached supervisor peak RSS over one capture (1 MiB writes)",
		Bgcmd:    ref{"runner", "BenchmarkCaptureLargeWrites", "peak-rss-KiB"},
		Baseline: &ref{"runner", "BenchmarkCaptureLargeWrites", "idle-peak-rss-KiB"},
		Ratio:    ratioSize, Aim: "memory does not grow with output size: peak RSS (VmHWM) within 16 MiB of a supervisor whose job writes nothing",
		Checks: []check{{"excess", "<=", 16 << 10}}},
	{Area: "runner", Name: "Detached supervisor peak RSS over one capture (small writes)",
		Bgcmd:    ref{"runner", "BenchmarkCaptureSmallWrites", "peak-rss-KiB"},
		Baseline: &ref{"runner", "BenchmarkCaptureSmallWrites", "idle-peak-rss-KiB"},
		Ratio:    ratioSize, Aim: "memory does not grow with output size: peak RSS (VmHWM) within 16 MiB of a supervisor whose job writes nothing",
		Checks: []check{{"excess", "<=", 16 << 10}}},

	// detached supervision.
	{Area: "durability", Name: "`bgcmd run -- /bin/true` until it returns, median",
		Bgcmd:    ref{"soak", "BenchmarkCLIRun", "median-ms"},
		Baseline: &ref{"soak", "BenchmarkCLIRun", "raw-median-ms"},
		Ratio:    ratioCost, Aim: "median ≤ 10× raw exec (blocks of runs and of raw execs in turn, each block's leftover processes waited out before the next)",
		Checks: []check{{"ratio", "<=", 10}},
		Floor:  &ref{"soak", "BenchmarkCLIRun", "floor-median-ms"}},
	{Area: "durability", Name: "`bgcmd run -- /bin/true` until it returns, against its floor, median",
		Bgcmd:    ref{"soak", "BenchmarkCLIRun", "median-ms"},
		Baseline: &ref{"soak", "BenchmarkCLIRun", "floor-median-ms"},
		Ratio:    ratioCost, Aim: "within 1.2× of the floor (testdata/clifloor: the same processes and one durable insert in the same SQLite regime, no bgcmd code)",
		Checks: []check{{"ratio", "<=", 1.2}}},
	{Area: "durability", Name: "`bgcmd run -- /bin/true` until it returns, one at a time, against its floor one at a time, median",
		Bgcmd:    ref{"soak", "BenchmarkCLIRun", "alone-median-ms"},
		Baseline: &ref{"soak", "BenchmarkCLIRun", "floor-alone-median-ms"},
		Ratio:    ratioCost, Aim: "(reported beside the burst above: each run's leftover processes waited out before the next, on both sides, so that no run meets the previous job's supervisor settling it; the burst's ratio less this one is what a burst adds)"},
	{Area: "durability", Name: "`bgcmd run -- /bin/true` until it returns, against the linked floor, median",
		Bgcmd:    ref{"soak", "BenchmarkCLIRun", "median-ms"},
		Baseline: &ref{"soak", "BenchmarkCLIRun", "linked-floor-median-ms"},
		Ratio:    ratioCost, Aim: "(reported beside the floor: the same program, its first process linking the packages bgcmd's main package imports and its second those bgcmd-supervisor's imports, so that both initialise them as bgcmd's do; the rest of the gap is bgcmd's own work)"},
	{Area: "durability", Name: "`bgcmd run -- /bin/true`: CPU of the process the caller waits for, median",
		Bgcmd:    ref{"soak", "BenchmarkCLIRun", "cpu-median-ms"},
		Baseline: &ref{"soak", "BenchmarkCLIRun", "floor-cpu-median-ms"},
		Ratio:    ratioCost, Aim: "(reported beside the floor's first process: user and system time of bgcmd's CLI process alone, not of the supervisor it starts, as the floor's second process is not counted either; on a machine of two cores both processes of a run share them, so CPU is where the time goes)"},
	{Area: "durability", Name: "`bgcmd run -- /bin/true`: page faults of the process the caller waits for, median",
		Bgcmd:    ref{"soak", "BenchmarkCLIRun", "faults-median"},
		Baseline: &ref{"soak", "BenchmarkCLIRun", "floor-faults-median"},
		Ratio:    ratioCount, Aim: "(reported beside the CPU above: the minor page faults of bgcmd's CLI process and of the floor's first process, each the first touch of a page of memory; on a virtual machine one costs microseconds, see the figure's benchmark)"},
	{Area: "durability", Name: "`bgcmd run -- /bin/true` until it returns, p90",
		Bgcmd:    ref{"soak", "BenchmarkCLIRun", "p90-ms"},
		Baseline: &ref{"soak", "BenchmarkCLIRun", "raw-p90-ms"},
		Ratio:    ratioCost, Aim: "(reported beside the median)"},
	{Area: "durability", Name: "MCP run_command_bg of /bin/true until the call returns, median",
		Bgcmd:    ref{"soak", "BenchmarkMCPRunCommandBg", "median-ms"},
		Baseline: &ref{"soak", "BenchmarkMCPRunCommandBg", "raw-median-ms"},
		Ratio:    ratioCost, Aim: "≤ 6× raw exec (a running bgcmd mcp over stdio, the job durable and running; blocks of calls and of raw execs in turn, each block's jobs settled before the next)",
		Checks: []check{{"ratio", "<=", 6}}},
	{Area: "durability", Name: "MCP run_command_bg, a stream of 150 calls, median",
		Bgcmd:    ref{"soak", "BenchmarkMCPRunCommandBgStream", "median-ms"},
		Baseline: &ref{"soak", "BenchmarkMCPRunCommandBgStream", "raw-median-ms"},
		Ratio:    ratioCost, Aim: "≤ 6× raw exec (as above, in blocks of 150 calls, each made as soon as the last returned: most come before the last job's supervisor is back)",
		Checks: []check{{"ratio", "<=", 6}}},
	{Area: "durability", Name: "MCP run_command_bg, a stream of 150 calls, p90",
		Bgcmd:    ref{"soak", "BenchmarkMCPRunCommandBgStream", "p90-ms"},
		Baseline: &ref{"soak", "BenchmarkMCPRunCommandBgStream", "raw-p90-ms"},
		Ratio:    ratioCost, Aim: "(reported beside the median; the benchmark's row also gives the supervisor processes started per 100 calls)"},
	{Area: "durability", Name: "runner.Start, detached, until it returns",
		Bgcmd:    ref{"runner", "BenchmarkDetachedStart", "ns/op"},
		Baseline: &ref{"runner", "BenchmarkRawExecTrue", "ns/op"},
		Ratio:    ratioCost, Aim: "(the library's share of the above)"},
	{Area: "durability", Name: "Reconcile 1,000 orphaned jobs",
		Bgcmd:    ref{"runner", "BenchmarkReconcile1000Orphans", "ms/1000-orphans"},
		Baseline: &ref{"runner", "BenchmarkReconcile1000Orphans", "jobwise-ms/1000-orphans"},
		Ratio:    ratioCost, Aim: "under 0.5 s (baseline, not a floor: the same durable work one job at a time, each job's compare-and-set claim, fsynced exit record and settle with its event row)",
		Checks: []check{{"value", "<=", 500}}},

	{Area: "output", Name: "Readiness wait: a line written to the wait returning, p50",
		Bgcmd:    ref{"runner", "BenchmarkReadinessWait", "ready-p50-ms"},
		Baseline: &ref{"runner", "BenchmarkReadinessWait", "poll250-p50-ms"},
		Ratio:    ratioSpeedup, Aim: "reported beside a 250 ms poll loop on the same job (the agent's alternative)"},
	{Area: "output", Name: "Readiness wait: a line written to the wait returning, p99",
		Bgcmd:    ref{"runner", "BenchmarkReadinessWait", "ready-p99-ms"},
		Baseline: &ref{"runner", "BenchmarkReadinessWait", "poll250-p99-ms"},
		Ratio:    ratioSpeedup, Aim: "under 50 ms",
		Checks: []check{{"value", "<=", 50}}},

	// being told (the settle notice, from the job's finished_at).
	{Area: "told", Name: "Settle to the Go channel, p99",
		Bgcmd:    ref{"cmd/bgcmd", "BenchmarkSettleNotice", "chan-p99-ms"},
		Baseline: &ref{"cmd/bgcmd", "BenchmarkSettleNotice", "poll1s-p99-ms"},
		Ratio:    ratioSpeedup, Aim: "p99 under 50 ms (baseline: a 1 s poll loop on the same jobs)",
		Checks: []check{{"value", "<=", 50}}},
	{Area: "told", Name: "Settle to the MCP notification, p99",
		Bgcmd:    ref{"cmd/bgcmd", "BenchmarkSettleNotice", "mcp-p99-ms"},
		Baseline: &ref{"cmd/bgcmd", "BenchmarkSettleNotice", "poll1s-p99-ms"},
		Ratio:    ratioSpeedup, Aim: "p99 under 50 ms",
		Checks: []check{{"value", "<=", 50}}},
	{Area: "told", Name: "Settle to `wait --any` returning, p99",
		Bgcmd:    ref{"cmd/bgcmd", "BenchmarkSettleNotice", "wait-any-p99-ms"},
		Baseline: &ref{"cmd/bgcmd", "BenchmarkSettleNotice", "poll1s-p99-ms"},
		Ratio:    ratioSpeedup, Aim: "p99 under 50 ms",
		Checks: []check{{"value", "<=", 50}}},
	{Area: "told", Name: "Settle to the Go channel, p50 (floor: the settle's own commit)",
		Bgcmd:    ref{"cmd/bgcmd", "BenchmarkSettleNotice", "chan-p50-ms"},
		Baseline: &ref{"cmd/bgcmd", "BenchmarkSettleNotice", "commit-floor-p50-ms"},
		Ratio:    ratioCost, Aim: "(reported beside the commit floor)"},

	// containment and the queue.
	{Area: "runner", Name: "Containment: a /bin/true job under the in-process reaper",
		Bgcmd:    ref{"runner", "BenchmarkContainmentCost", "subreaper-ms/job"},
		Baseline: &ref{"runner", "BenchmarkContainmentCost", "group-ms/job"},
		Ratio:    ratioCost, Aim: "(reported: the added cost per job of containment and accounting, in-process)"},
	{Area: "runner", Name: "Containment: end of a job in a detached supervisor",
		Bgcmd:    ref{"runner", "BenchmarkSubreaperEndOfJob", "subreaper-us/job"},
		Baseline: &ref{"runner", "BenchmarkSubreaperEndOfJob", "group-us/job"},
		Ratio:    ratioCost, Aim: "(reported: the subreaper's sweep beside the process-group check)"},
	{Area: "queue", Name: "Queue: a slot freeing to the next job running, median",
		Bgcmd:    ref{"runner", "BenchmarkQueueSlotHandoff", "handoff-median-ms"},
		Baseline: &ref{"runner", "BenchmarkQueueSlotHandoff", "await-then-start-median-ms"},
		Ratio:    ratioCost, Aim: "(reported beside awaiting the running job and then starting the next)"},
	{Area: "queue", Name: "Queue: jobs/s through a group with max_running = 4",
		Bgcmd:    ref{"runner", "BenchmarkQueueThroughputGroup4", "queued-jobs/s"},
		Baseline: &ref{"runner", "BenchmarkQueueThroughputGroup4", "unqueued-jobs/s"},
		Ratio:    ratioShare, Aim: "(reported beside 4 callers each starting and awaiting)"},

	// the web view (a million jobs, a big log).
	{Area: "web view", Name: "Jobs page at 1,000,000 jobs",
		Bgcmd:    ref{"webui", "BenchmarkJobsPageAtMillion", "ms/page"},
		Baseline: &ref{"webui", "BenchmarkJobsPageAtMillion", "ms/baseline"},
		Ratio:    ratioCost, Aim: "under 50 ms (baseline: the same store query alone)",
		Checks: []check{{"value", "<=", 50}}},
	{Area: "web view", Name: "Jobs page, filtered, at 1,000,000 jobs",
		Bgcmd:    ref{"webui", "BenchmarkJobsPageFilteredAtMillion", "ms/page"},
		Baseline: &ref{"webui", "BenchmarkJobsPageFilteredAtMillion", "ms/baseline"},
		Ratio:    ratioCost, Aim: "under 50 ms",
		Checks: []check{{"value", "<=", 50}}},
	{Area: "web view", Name: "A job's page at 1,000,000 jobs",
		Bgcmd:    ref{"webui", "BenchmarkJobPageAtMillion", "ms/page"},
		Baseline: &ref{"webui", "BenchmarkJobPageAtMillion", "ms/baseline"},
		Ratio:    ratioCost, Aim: "under 50 ms",
		Checks: []check{{"value", "<=", 50}}},
	{Area: "web view", Name: "Output page near the end of a big log",
		Bgcmd:    ref{"webui", "BenchmarkOutputPageBigLog", "ms/page"},
		Baseline: &ref{"webui", "BenchmarkOutputPageBigLog", "ms/baseline"},
		Ratio:    ratioCost, Aim: "under 50 ms (baseline: the reader's page alone)",
		Checks: []check{{"value", "<=", 50}}},
	{Area: "web view", Name: "Output tail of a big log",
		Bgcmd:    ref{"webui", "BenchmarkOutputTailBigLog", "ms/page"},
		Baseline: &ref{"webui", "BenchmarkOutputTailBigLog", "ms/baseline"},
		Ratio:    ratioCost, Aim: "under 50 ms",
		Checks: []check{{"value", "<=", 50}}},
	{Area: "web view", Name: "Charts page (last day) at 1,000,000 jobs",
		Bgcmd:    ref{"webui", "BenchmarkChartsPageAtMillion", "ms/page"},
		Baseline: &ref{"webui", "BenchmarkChartsPageAtMillion", "ms/baseline"},
		Ratio:    ratioCost, Aim: "under 50 ms",
		Checks: []check{{"value", "<=", 50}}},
	{Area: "web view", Name: "Charts page (last week) at 1,000,000 jobs",
		Bgcmd:    ref{"webui", "BenchmarkChartsWeekAtMillion", "ms/page"},
		Baseline: &ref{"webui", "BenchmarkChartsWeekAtMillion", "ms/baseline"},
		Ratio:    ratioCost, Aim: "under 50 ms",
		Checks: []check{{"value", "<=", 50}}},

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
	{Area: "output", Name: "Read a page at 99.9% of a big live log, its index as far behind as a capture leaves it",
		Bgcmd:    ref{"artifacts", "BenchmarkReadPageLiveTrailing", "µs/page"},
		Baseline: &ref{"artifacts", "BenchmarkReadPageLiveTrailing", "caught-up-µs/page"},
		Ratio:    ratioCost, Aim: "under 5 ms per page whatever the log's size: it reads at most the 3.5 MiB past the last record, twice (baseline: the same page with the index caught up)",
		Checks: []check{{"value", "<=", 5000}}},
	{Area: "output", Name: "Grep a whole big log for a line it does not hold, page after page",
		Bgcmd:    ref{"artifacts", "BenchmarkGrepScan", "MB/s"},
		Baseline: &ref{"artifacts", "BenchmarkGrepScan", "floor-MB/s"},
		Ratio:    ratioShare, Aim: "≥ 80% of the floor's speed (floor: the same lines through a bufio.Reader, matched as bytes, no index, no pages, no decoding); what a readiness wait or a filter over a whole log costs",
		Checks: []check{{"ratio", ">=", 0.8}}},
	{Area: "output", Name: "Indexing overhead on capture throughput",
		Bgcmd:    ref{"artifacts", "BenchmarkCaptureIndexing", "MB/s"},
		Baseline: &ref{"artifacts", "BenchmarkCaptureIndexing", "plain-MB/s"},
		Ratio:    ratioShare, Aim: "overhead under 15% (≥ 85% of the plain file write, with the same writeback, drop-behind and final fsync)",
		Checks: []check{{"ratio", ">=", 0.85}},
		Floor:  &ref{"artifacts", "BenchmarkCaptureIndexing", "hashed-MB/s"}},
	{Area: "output", Name: "Indexing overhead on capture throughput, against the hashing floor",
		Bgcmd:    ref{"artifacts", "BenchmarkCaptureIndexing", "MB/s"},
		Baseline: &ref{"artifacts", "BenchmarkCaptureIndexing", "hashed-MB/s"},
		Ratio:    ratioShare, Aim: "(reported beside the plain write: the same writes with their sha256 taken by a second goroutine, in batches of a capture's size, and no index; the hashing floor's own share of the plain write is the part of the overhead that is the hash)"},
	{Area: "output", Name: "Capture CPU per GiB against the hashing floor (4 KiB writes, in-process)",
		Bgcmd:    ref{"artifacts", "BenchmarkCaptureIndexing", "cpu-s/GiB"},
		Baseline: &ref{"artifacts", "BenchmarkCaptureIndexing", "hashed-cpu-s/GiB"},
		Ratio:    ratioCost, Aim: "(reported: the process's CPU, every thread, for the same bytes)"},

	// retention (list latency at a million jobs is the store's figure).
	{Area: "retention", Name: "Prune 100,000 settled jobs with their files",
		Bgcmd:    ref{"runner", "BenchmarkPrune", "jobs/s"},
		Baseline: &ref{"runner", "BenchmarkPrune", "floor-jobs/s"},
		Ratio:    ratioShare, Aim: "≥ 30,000 jobs/s (floor: the same rows deleted by key, a batch per transaction, and the same files unlinked)",
		Checks: []check{{"value", ">=", 30000}},
		Floor:  &ref{"runner", "BenchmarkPrune", "floor-jobs/s"}},
}
