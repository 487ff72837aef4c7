package soak

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgcmd/bgcmd/internal/benchkit"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/launch"
	"github.com/bgcmd/bgcmd/internal/testkit"
)

// BenchmarkCLIRun times `bgcmd run -- /bin/true` (the real binary, a
// detached supervisor, the job durable and running) until it returns, beside
// a raw exec.Command("/bin/true").Run() and the floor program
// (testdata/clifloor: the same processes and one durable insert in the same
// SQLite regime, no bgcmd code), built plain and built linked (the same
// program, its first process linking the packages bgcmd's main package
// imports and its second those bgcmd-supervisor's imports, whose
// initialisation then runs as in bgcmd's two processes: see
// testdata/clifloor/linked.go and linkedsup.go). Each way runs in blocks of
// cliBlock, the ways in turn, so a noisy neighbour hits all alike; after a
// block the processes it left behind (bgcmd's supervisors settling their
// jobs, the floor's second processes) are waited out before the next way's
// block starts, so no way is timed beside another's leftovers: a raw exec
// right after `bgcmd run` shares the machine with the supervisor settling
// that job. Within its block each `bgcmd run` meets the previous one's
// supervisor, as a burst of runs does. It reports the medians and 90th
// percentiles and the ratios of the medians to raw exec and to both floors,
// and the median CPU time and page faults of the process the caller waits
// for (bgcmd's CLI, each floor's first process; not the second processes,
// which outlive them).
// Two more ways run one at a time, bgcmd and the plain floor, each run's
// leftover processes waited out before the next: their medians part the gap
// to the floor into what a single run costs and what a burst adds, the
// previous job's supervisor settling it (the floor's second process, which
// writes nothing, ends at once).
func BenchmarkCLIRun(b *testing.B) {
	h := newHome(b, "", defaultPolicy(b))
	h.mustRun(0, "list") // the database exists before the first timing
	floorBin, linkedBin := buildFloor(b, ""), buildFloor(b, "linked")
	floorDB := filepath.Join(b.TempDir(), "floor.db")
	// runFloor returns how long one run of the floor program bin took, the
	// CPU time and the page faults of its first process, and the pid of the
	// second process it started, which outlives it.
	runFloor := func(bin string) (time.Duration, time.Duration, int64, int) {
		cmd := exec.Command(bin, floorDB, "/bin/true")
		cmd.Dir = h.root
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took := time.Since(start)
		var id, pid int
		if err != nil {
			b.Fatalf("floor: %v %s", err, out)
		}
		if _, err := fmt.Sscan(string(out), &id, &pid); err != nil {
			b.Fatalf("floor printed %q: %v", out, err)
		}
		return took, cpuOf(cmd.ProcessState), faultsOf(cmd.ProcessState), pid
	}
	_, _, _, pid := runFloor(floorBin) // its database exists before the first timing too
	awaitGone(b, []int{pid})
	ctx := context.Background()
	var cli, raw, floor, linked, cliAlone, floorAlone []time.Duration
	var cliCPU, floorCPU, linkedCPU []time.Duration
	var cliFaults, floorFaults []int64
	floorBlock := func(bin string, into, cpuInto *[]time.Duration, faultsInto *[]int64) func() {
		return func() {
			pids := make([]int, 0, cliBlock)
			for range cliBlock {
				took, cpu, faults, pid := runFloor(bin)
				*into, *cpuInto, pids = append(*into, took), append(*cpuInto, cpu), append(pids, pid)
				if faultsInto != nil {
					*faultsInto = append(*faultsInto, faults)
				}
			}
			awaitGone(b, pids)
		}
	}
	var all []string // every job run, checked settled at the end
	// cliRun times one `bgcmd run` into took (and its CLI's CPU and page
	// faults into cpu and faults, when not nil) and returns its job's id.
	cliRun := func(took, cpu *[]time.Duration, faults *[]int64) string {
		res, err := h.run(ctx, "run", "--", "/bin/true")
		if err != nil || res.code != 0 {
			b.Fatalf("%v %s", err, res)
		}
		*took = append(*took, res.took)
		if cpu != nil {
			*cpu, *faults = append(*cpu, res.cpu), append(*faults, res.faults)
		}
		return string(res.stdout[:len(res.stdout)-1])
	}
	b.ResetTimer()
	for i := range max(b.N, cliMinBlocks) {
		benchkit.InTurn(i,
			floorBlock(floorBin, &floor, &floorCPU, &floorFaults),
			floorBlock(linkedBin, &linked, &linkedCPU, nil),
			func() {
				ids := make([]string, 0, cliBlock)
				for range cliBlock {
					ids = append(ids, cliRun(&cli, &cliCPU, &cliFaults))
				}
				// Waited out through the process table, not the store: a
				// connection of this process would keep the last supervisor
				// from checkpointing the log at its close, which every
				// `bgcmd run` in a quiet home meets.
				awaitGone(b, h.supervisors())
				all = append(all, ids...)
			},
			func() {
				for range cliBlock {
					raw = append(raw, rawExec(b))
				}
			},
			// One at a time: each run's leftover processes waited out
			// before the next run, on both sides.
			func() {
				for range cliBlock {
					all = append(all, cliRun(&cliAlone, nil, nil))
					awaitGone(b, h.supervisors())
				}
			},
			func() {
				for range cliBlock {
					took, _, _, pid := runFloor(floorBin)
					floorAlone = append(floorAlone, took)
					awaitGone(b, []int{pid})
				}
			},
		)
	}
	b.StopTimer()
	med, p90 := percentile(cli, 50), percentile(cli, 90)
	rmed, rp90 := percentile(raw, 50), percentile(raw, 90)
	b.ReportMetric(ms(med), "median-ms")
	b.ReportMetric(ms(p90), "p90-ms")
	b.ReportMetric(ms(rmed), "raw-median-ms")
	b.ReportMetric(ms(rp90), "raw-p90-ms")
	b.ReportMetric(float64(med)/float64(rmed), "x-raw-median")
	fmed := percentile(floor, 50)
	b.ReportMetric(ms(fmed), "floor-median-ms")
	b.ReportMetric(ms(percentile(floor, 90)), "floor-p90-ms")
	b.ReportMetric(float64(med)/float64(fmed), "x-floor-median")
	lmed := percentile(linked, 50)
	b.ReportMetric(ms(lmed), "linked-floor-median-ms")
	b.ReportMetric(float64(med)/float64(lmed), "x-linked-floor-median")
	amed, famed := percentile(cliAlone, 50), percentile(floorAlone, 50)
	b.ReportMetric(ms(amed), "alone-median-ms")
	b.ReportMetric(ms(famed), "floor-alone-median-ms")
	b.ReportMetric(float64(amed)/float64(famed), "x-floor-alone-median")
	// Where the time goes: the CPU of the process the caller waits for,
	// each side's first process alone.
	b.ReportMetric(ms(percentile(cliCPU, 50)), "cpu-median-ms")
	b.ReportMetric(ms(percentile(floorCPU, 50)), "floor-cpu-median-ms")
	b.ReportMetric(ms(percentile(linkedCPU, 50)), "linked-floor-cpu-median-ms")
	// And how much of that CPU is first touches of memory: the minor page
	// faults of the same processes. On a virtual machine one can cost 10 µs
	// (5 in the guest's fault, 5 in the hypervisor's, measured with a C
	// program that touched 20,000 new pages), so that a few hundred are
	// milliseconds.
	b.ReportMetric(float64(percentile(cliFaults, 50)), "faults-median")
	b.ReportMetric(float64(percentile(floorFaults, 50)), "floor-faults-median")
	b.ReportMetric(float64(len(cli)), "samples")
	st := h.openRO()
	defer st.Close()
	awaitSettled(b, st, all)
}

// cliBlock, mcpBlock and mcpStreamBlock are how many runs each way makes
// in one block of BenchmarkCLIRun, BenchmarkMCPRunCommandBg and
// BenchmarkMCPRunCommandBgStream, and minBlocks the fewest blocks each way
// runs. BenchmarkCLIRun runs at least cliMinBlocks: with 3 (30 runs a
// way) its medians beside the floors moved by more from one report to the
// next than changes of 5 to 10% that an A/B of 300 runs a way showed; 100
// runs a way cost it about 10 s more.
const (
	cliBlock       = 10
	mcpBlock       = 20
	mcpStreamBlock = 150
	minBlocks      = 3
	cliMinBlocks   = 10
)

// rawExec times the baseline: exec.Command("/bin/true").Run().
func rawExec(b *testing.B) time.Duration {
	start := time.Now()
	if err := exec.Command("/bin/true").Run(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// awaitSettled waits until every job of ids has settled.
func awaitSettled(b *testing.B, st *jobstore.Store, ids []string) {
	b.Helper()
	for _, id := range ids {
		eventually(b, time.Minute, "job "+id+" settled", func() (bool, string) {
			rec, err := st.Get(context.Background(), id)
			return err == nil && rec.State.Settled(), fmt.Sprint(err)
		})
	}
}

// supervisors returns the pids of the detached supervisors of h's binary
// (bgcmd-supervisor beside it, bgcmd-full, or the binary itself) now running (a
// benchmark runs alone: they are its own).
func (h *home) supervisors() []int {
	var bins []os.FileInfo
	dir := filepath.Dir(h.bin)
	for _, path := range []string{h.bin, filepath.Join(dir, launch.SupervisorName), filepath.Join(dir, launch.FullName)} {
		if fi, err := os.Stat(path); err == nil {
			bins = append(bins, fi)
		}
	}
	var pids []int
	for _, pid := range testkit.Supervisors() {
		exe, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/exe")
		if err == nil && slices.ContainsFunc(bins, func(bin os.FileInfo) bool { return os.SameFile(exe, bin) }) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// awaitGone waits until the processes pids have ended.
func awaitGone(b testing.TB, pids []int) {
	b.Helper()
	for _, pid := range pids {
		eventually(b, time.Minute, fmt.Sprintf("process %d gone", pid), func() (bool, string) {
			return !isProcess(pid, 0), ""
		})
	}
}

// buildFloor builds testdata/clifloor as bgcmd is built (static, no cgo),
// with the build tags tags (none when empty), into a temporary directory.
// The linked floor (tags "linked") is built with bgcmd's lean tag too
// (launch.LeanTag), and its second program beside it with the tag
// linkedsup and the lean tag, as make build builds bgcmd and
// bgcmd-supervisor, so that both link the same packages.
func buildFloor(b *testing.B, tags string) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "clifloor"+tags)
	build := func(tags, out string) {
		if strings.HasPrefix(tags, "linked") {
			tags += "," + launch.LeanTag
		}
		cmd := exec.Command("go", "build", "-tags", tags, "-o", out, "./testdata/clifloor")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("build the floor program: %v\n%s", err, out)
		}
	}
	build(tags, bin)
	if tags == "linked" {
		build("linkedsup", bin+"-child")
	}
	return bin
}

// percentile is the p-th percentile of d (durations, or counts).
func percentile[T cmp.Ordered](d []T, p int) T {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkMCPRunCommandBg times one run_command_bg call of /bin/true
// through a running `bgcmd mcp` (the real binary over stdio, driven by the
// go-sdk client: the job durable and its child running when the call
// returns), beside a raw exec.Command("/bin/true").Run(), in blocks of
// mcpBlock each, the two in turn; the jobs of a block settle before the raw
// block starts. It reports both medians and the ratio of the medians.
func BenchmarkMCPRunCommandBg(b *testing.B) { benchMCPRunCommandBg(b, mcpBlock) }

// BenchmarkMCPRunCommandBgStream is BenchmarkMCPRunCommandBg with blocks
// of mcpStreamBlock calls: an agent's stream of starts, each call made as
// soon as the last returned, most before the last job's supervisor is
// back to take another.
func BenchmarkMCPRunCommandBgStream(b *testing.B) { benchMCPRunCommandBg(b, mcpStreamBlock) }

func benchMCPRunCommandBg(b *testing.B, block int) {
	h := newHome(b, "", defaultPolicy(b))
	h.mustRun(0, "list") // the database exists before the first timing
	cmd := h.command(context.Background(), "mcp")
	client := mcp.NewClient(&mcp.Implementation{Name: "bgcmd-bench", Version: "v0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	cancel()
	if err != nil {
		b.Fatalf("connect to bgcmd mcp: %v", err)
	}
	defer cs.Close()
	call := func() (string, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command_bg",
			Arguments: map[string]any{"argv": []string{"/bin/true"}}})
		took := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("run_command_bg: %v %+v", err, res)
		}
		var out struct {
			TaskID string `json:"task_id"`
		}
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil || out.TaskID == "" {
			b.Fatalf("run_command_bg result: %v %s", err, res.Content[0].(*mcp.TextContent).Text)
		}
		return out.TaskID, took
	}
	st := h.openRO()
	defer st.Close()
	id, _ := call() // the server's first call warms what every later one shares
	awaitSettled(b, st, []string{id})
	var tool, raw []time.Duration
	b.ResetTimer()
	for i := range max(b.N, minBlocks) {
		benchkit.InTurn(i,
			func() {
				ids := make([]string, 0, block)
				for range block {
					id, took := call()
					tool, ids = append(tool, took), append(ids, id)
				}
				awaitSettled(b, st, ids)
			},
			func() {
				for range block {
					raw = append(raw, rawExec(b))
				}
			},
		)
	}
	b.StopTimer()
	med, rmed := percentile(tool, 50), percentile(raw, 50)
	b.ReportMetric(ms(med), "median-ms")
	b.ReportMetric(ms(percentile(tool, 90)), "p90-ms")
	b.ReportMetric(ms(rmed), "raw-median-ms")
	b.ReportMetric(ms(percentile(raw, 90)), "raw-p90-ms")
	b.ReportMetric(float64(med)/float64(rmed), "x-raw-median")
	b.ReportMetric(float64(len(tool)), "samples")
	// Every job names its supervisor: a server that reuses them starts
	// few for many calls.
	n, err := queryInts(context.Background(), st, "SELECT COUNT(DISTINCT supervisor_pid), COUNT(*) FROM jobs")
	if err != nil {
		b.Fatalf("count the jobs' supervisors: %v", err)
	}
	b.ReportMetric(100*float64(n[0][0])/float64(n[0][1]), "supervisors-per-100-calls")
}
