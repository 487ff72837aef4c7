package main

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// settleSamples is how many jobs one op settles.
const settleSamples = 20

// BenchmarkSettleNotice measures the time from a job's terminal row (its
// finished_at, written by its detached supervisor) to each way a waiter
// learns of it, on the same job: an MCP client subscribed to the job's
// resource (`bgcmd mcp`, the real binary), `bgcmd wait --any` returning,
// and a Go subscriber's channel (runner.Events in another store handle).
// Beside them, in the same run, what an agent does without them: a loop
// that reads the job's row every second, started at a random phase. It
// reports the 50th and 99th percentiles of each, in milliseconds. The
// start point is finished_at, taken before the supervisor writes its exit
// record, banks the logs and commits: commit-floor, a 1 ms poll of the row,
// is the part of every figure that is the settle's own write, not the
// telling.
func BenchmarkSettleNotice(b *testing.B) {
	home, root := b.TempDir(), b.TempDir()
	gateScript := fixture(b, "wait-for-file.sh")
	pol := filepath.Join(home, "policy.toml")
	if err := os.WriteFile(pol, []byte("allowed_executables = [\""+gateScript+"\"]\ncwd_root = \""+root+"\"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, err := jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(home, "bgcmd.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	r, err := runner.New(ctx, runner.Options{Store: st, Home: home, Detached: true, Binary: binary,
		Session: "bench", Policy: &policy.Policy{CwdRoot: root, AllowedExecutables: []string{gateScript}}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close(context.Background())
	// The Go subscriber reads through its own store handle.
	st2, err := jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(home, "bgcmd.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer st2.Close()
	r2, err := runner.New(ctx, runner.Options{Store: st2, Home: home, SkipReconcile: true})
	if err != nil {
		b.Fatal(err)
	}
	evCtx, stopEvents := context.WithCancel(ctx)
	defer stopEvents()
	events, err := r2.Events(evCtx, runner.EventFilter{Settled: true, After: -1})
	if err != nil {
		b.Fatal(err)
	}
	updates := make(chan string, 16)
	server := exec.Command(binary, "mcp")
	server.Env = append(os.Environ(), "BGCMD_HOME="+home, "BGCMD_POLICY="+pol, "BGCMD_SESSION=bench")
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updates <- req.Params.URI
		}})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: server, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	var viaMCP, viaWait, viaChan, viaPoll, viaFloor []time.Duration
	b.ResetTimer()
	for range b.N {
		for i := range settleSamples {
			gate := filepath.Join(root, "gate-"+strconv.Itoa(len(viaChan))+"-"+strconv.Itoa(i))
			j, err := r.Start(ctx, []string{gateScript, gate}, runner.StartOptions{Cwd: root})
			if err != nil {
				b.Fatal(err)
			}
			uri := "bgcmd://jobs/" + j.ID
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				b.Fatal(err)
			}
			wait := exec.Command(binary, "wait", "--any", j.ID)
			wait.Env = server.Env
			if err := wait.Start(); err != nil {
				b.Fatal(err)
			}
			waited := make(chan time.Time, 1)
			go func() { wait.Wait(); waited <- time.Now() }()
			polled := make(chan time.Time, 1)
			go func() {
				tick := time.NewTicker(time.Second)
				defer tick.Stop()
				for range tick.C {
					if rec, err := st2.Get(ctx, j.ID); err == nil && rec.State.Settled() {
						polled <- time.Now()
						return
					}
				}
			}()
			visible := make(chan time.Time, 1)
			stopFloor := make(chan struct{})
			go func() {
				for {
					select {
					case <-stopFloor:
						return
					default:
					}
					if rec, err := st2.Get(ctx, j.ID); err == nil && rec.State.Settled() {
						visible <- time.Now()
						return
					}
					time.Sleep(time.Millisecond) // the floor's own poll interval
				}
			}()
			time.Sleep(300*time.Millisecond + rand.N(time.Second)) // let the waiters block; the settle lands at any phase of the poll
			if err := os.WriteFile(gate, nil, 0o600); err != nil {
				b.Fatal(err)
			}
			var gotMCP, gotChan time.Time
			for gotMCP.IsZero() || gotChan.IsZero() {
				select {
				case u := <-updates:
					if u == uri {
						gotMCP = time.Now()
					}
				case e := <-events:
					if e.JobID == j.ID {
						gotChan = time.Now()
					}
				case <-time.After(time.Minute):
					b.Fatal("no notice of the settle within a minute")
				}
			}
			gotWait, gotPoll, gotVisible := <-waited, <-polled, <-visible
			close(stopFloor)
			rec, err := st.Get(ctx, j.ID)
			if err != nil || rec.FinishedAt == nil || rec.State != bgcmd.StateExited {
				b.Fatalf("job %s: %v %+v", j.ID, err, rec)
			}
			at := *rec.FinishedAt
			viaMCP = append(viaMCP, gotMCP.Sub(at))
			viaWait = append(viaWait, gotWait.Sub(at))
			viaChan = append(viaChan, gotChan.Sub(at))
			viaPoll = append(viaPoll, gotPoll.Sub(at))
			viaFloor = append(viaFloor, gotVisible.Sub(at))
			_ = cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
		}
	}
	b.StopTimer()
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"mcp", viaMCP}, {"wait-any", viaWait}, {"chan", viaChan}, {"poll1s", viaPoll}, {"commit-floor", viaFloor}} {
		b.ReportMetric(msAt(m.d, 50), m.name+"-p50-ms")
		b.ReportMetric(msAt(m.d, 99), m.name+"-p99-ms")
	}
	// The telling alone: each way's time past the row becoming visible.
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"mcp", viaMCP}, {"wait-any", viaWait}, {"chan", viaChan}} {
		over := make([]time.Duration, len(m.d))
		for i := range m.d {
			over[i] = m.d[i] - viaFloor[i]
		}
		b.ReportMetric(msAt(over, 50), m.name+"-after-commit-p50-ms")
		b.ReportMetric(msAt(over, 99), m.name+"-after-commit-p99-ms")
	}
}

// msAt returns the p-th percentile of d in milliseconds.
func msAt(d []time.Duration, p int) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	i := min(len(s)-1, len(s)*p/100)
	return float64(s[i]) / float64(time.Millisecond)
}
