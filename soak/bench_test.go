package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgcmd/bgcmd"
)

// BenchmarkCLIRun times `bgcmd run -- /bin/true` (the real binary, a
// detached supervisor, the job durable and running) until it returns,
// interleaved with a raw exec.Command("/bin/true").Run() and with the floor
// program (testdata/clifloor: the same processes and one durable insert in
// the same SQLite regime, no bgcmd code) in the same loop so a noisy
// neighbour hits all alike. It reports the medians and 90th percentiles and
// the ratios of the medians to raw exec and to the floor.
func BenchmarkCLIRun(b *testing.B) {
	h := newHome(b, "", defaultPolicy(b))
	h.mustRun(0, "list") // the database exists before the first timing
	floorBin := buildFloor(b)
	floorDB := filepath.Join(b.TempDir(), "floor.db")
	runFloor := func() time.Duration {
		cmd := exec.Command(floorBin, floorDB, "/bin/true")
		cmd.Dir = h.root
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("floor: %v %s", err, out)
		}
		return time.Since(start)
	}
	runFloor() // its database exists before the first timing too
	ctx := context.Background()
	cli := make([]time.Duration, 0, b.N)
	raw := make([]time.Duration, 0, b.N)
	floor := make([]time.Duration, 0, b.N)
	ids := make([]string, 0, b.N)
	b.ResetTimer()
	for range b.N {
		floor = append(floor, runFloor())

		res, err := h.run(ctx, "run", "--", "/bin/true")
		if err != nil || res.code != 0 {
			b.Fatalf("%v %s", err, res)
		}
		cli = append(cli, res.took)
		ids = append(ids, string(res.stdout[:len(res.stdout)-1]))

		start := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		raw = append(raw, time.Since(start))
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
	// Every job settles before the home goes away.
	st := h.openRO()
	defer st.Close()
	for _, id := range ids {
		eventually(b, time.Minute, "job "+id, func() (bool, string) {
			rec, err := st.Get(ctx, id)
			return err == nil && rec.State == bgcmd.StateExited, fmt.Sprint(err)
		})
	}
}

// buildFloor builds testdata/clifloor as bgcmd is built (static, no cgo)
// into a temporary directory.
func buildFloor(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "clifloor")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/clifloor")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build the floor program: %v\n%s", err, out)
	}
	return bin
}

func percentile(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkMCPRunCommandBg times one run_command_bg call of /bin/true
// through a running `bgcmd mcp` (the real binary over stdio, driven by the
// go-sdk client: the job durable and its child running when the call
// returns), interleaved with a raw exec.Command("/bin/true").Run(). It
// reports both medians and the ratio of the medians.
func BenchmarkMCPRunCommandBg(b *testing.B) {
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
	call() // the server's first call warms what every later one shares
	tool := make([]time.Duration, 0, b.N)
	raw := make([]time.Duration, 0, b.N)
	ids := make([]string, 0, b.N)
	b.ResetTimer()
	for range b.N {
		id, took := call()
		tool = append(tool, took)
		ids = append(ids, id)
		start := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		raw = append(raw, time.Since(start))
	}
	b.StopTimer()
	med, rmed := percentile(tool, 50), percentile(raw, 50)
	b.ReportMetric(ms(med), "median-ms")
	b.ReportMetric(ms(percentile(tool, 90)), "p90-ms")
	b.ReportMetric(ms(rmed), "raw-median-ms")
	b.ReportMetric(float64(med)/float64(rmed), "x-raw-median")
	// Every job settles before the home goes away.
	st := h.openRO()
	defer st.Close()
	for _, id := range ids {
		eventually(b, time.Minute, "job "+id, func() (bool, string) {
			rec, err := st.Get(context.Background(), id)
			return err == nil && rec.State.Settled(), fmt.Sprint(err)
		})
	}
}
