//go:build linux

package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/benchkit"
	"github.com/bgcmd/bgcmd/runner"
)

// The capture benchmarks run one command that writes BGCMD_BENCH_CAPTURE_MB
// MiB (default 1024) four ways in every sample, in a rotating order:
//
//   - through bgcmd: a detached supervisor pumps the command's pipes into
//     new log files (cap, tail, hash and index on), fsyncs and banks them;
//   - the pipe floor (testdata/capturefloor, a process of its own as the
//     supervisor is): the command writes into a pipe (sized as bgcmd sizes
//     its pipes) that the floor copies with io.CopyBuffer, through a buffer
//     of bgcmd's read size, into a new file, starting the writeback of
//     every 8 MiB and dropping the cache of the 8 MiB before as bgcmd
//     does, then fsyncs it. bgcmd cannot
//     skip reading the bytes (it hashes and indexes them), so the copy
//     goes through user space, not splice;
//   - the hashing floor: the pipe floor with the sha256 bgcmd must take of
//     what it keeps, each chunk hashed once written by a second goroutine
//     (as bgcmd hashes on a second core): the least a capture that can
//     prove its output must do, and the floor bgcmd's aims are set against
//     in MB/s and in CPU seconds per GiB;
//   - the direct file: the command writes straight into a new file, then
//     fsync; no pipe, no reader (reported beside the pipe floor).
//
// Each sample also reads the supervisor's peak RSS (VmHWM, every
// rssPeriod while it runs and once its job has settled), and the peak of
// a supervisor of a job that writes nothing, for comparison; and the CPU
// seconds per GiB of the supervisor (cpu-s/GiB) beside those of the
// floors (pipe-cpu-s/GiB, hashed-cpu-s/GiB), each the process's own from
// its rusage once reaped, less its command's: on a shared machine, wall
// time says little about a capture that hashes on a second core, CPU time
// says what it costs.

// captureSize is the output size of the capture benchmarks; BGCMD_BENCH_CAPTURE_MB
// overrides it (default 1024 MiB).
func captureSize() int64 {
	if v, err := strconv.Atoi(os.Getenv("BGCMD_BENCH_CAPTURE_MB")); err == nil && v > 0 {
		return int64(v) << 20
	}
	return 1 << 30
}

func captureArgv(large bool) []string {
	n := captureSize()
	if large {
		return []string{"/bin/dd", "if=/dev/zero", "bs=1M", "count=" + strconv.FormatInt(n>>20, 10), "status=none"}
	}
	return []string{"/usr/bin/head", "-c", strconv.FormatInt(n, 10), "/dev/zero"}
}

// BenchmarkCaptureSmallWrites: head -c writes small chunks; bgcmd's capture
// beside the pipe floor and the direct file.
func BenchmarkCaptureSmallWrites(b *testing.B) { benchCapture(b, false) }

// BenchmarkCaptureLargeWrites: dd bs=1M; bgcmd's capture beside the pipe
// floor and the direct file.
func BenchmarkCaptureLargeWrites(b *testing.B) { benchCapture(b, true) }

func benchCapture(b *testing.B, large bool) {
	e := releaseBenchEnv(b, "/bin/dd", "/usr/bin/head")
	argv := captureArgv(large)
	size := captureSize()
	mbps := func(d time.Duration) float64 { return float64(size) / 1e6 / d.Seconds() }
	floorDir := b.TempDir()
	floorBin := buildCaptureFloor(b)
	exits := watchSupervisorExits(b)
	var s benchkit.Samples
	for i := range max(b.N, captureSamples) {
		var bgcmdSum, floorSum string // the same bytes: the same hash
		ways := []func(){
			func() {
				d, peak, cpu, sum := captureDetached(b, e, exits, argv)
				bgcmdSum = sum
				s.Op(d)
				s.Add("MB/s", mbps(d))
				s.Add("peak-rss-KiB", float64(peak))
				s.Add("cpu-s/GiB", cpuPerGiB(cpu))
			},
			func() {
				d, _, cpu := pipeFloor(b, floorBin, argv, filepath.Join(floorDir, fmt.Sprint("pipe", i)), false)
				s.Add("pipe-MB/s", mbps(d))
				s.Add("pipe-cpu-s/GiB", cpuPerGiB(cpu))
			},
			func() {
				d, sum, cpu := pipeFloor(b, floorBin, argv, filepath.Join(floorDir, fmt.Sprint("hashed", i)), true)
				floorSum = sum
				s.Add("hashed-MB/s", mbps(d))
				s.Add("hashed-cpu-s/GiB", cpuPerGiB(cpu))
			},
			func() {
				s.Add("direct-MB/s", mbps(directFile(b, argv, filepath.Join(floorDir, fmt.Sprint("direct", i)))))
			},
		}
		for k := range ways {
			runtime.GC() // the last way's garbage is not collected during this one
			ways[(i+k)%len(ways)]()
		}
		require.Equal(b, floorSum, bgcmdSum, "the hashing floor and bgcmd hashed the same output")
		s.Add("idle-peak-rss-KiB", float64(idleSupervisorPeak(b, e)))
	}
	s.Report(b)
}

// captureDetached runs argv through a detached supervisor until the job has
// settled and returns the time that took, the supervisor's peak RSS, the
// CPU time it used (user and system, all its threads; the job's own CPU is
// not in it) and the sha256 of the output it banked.
func captureDetached(b *testing.B, e *env, exits *supervisorExits, argv []string) (time.Duration, int64, time.Duration, string) {
	ctx := context.Background()
	start := time.Now()
	j, err := e.r.Start(ctx, argv, runner.StartOptions{})
	require.NoError(b, err)
	pid := supervisorOf(b, e, j.ID)
	peak := watchPeakRSS(b, pid, nil)
	s, err := e.r.Await(ctx, j.ID, 10*time.Minute)
	took := time.Since(start)
	require.NoError(b, err)
	require.Equal(b, bgcmd.StateExited, s.State, "%+v", s)
	require.Equal(b, captureSize(), s.Stdout.Bytes)
	require.NotNil(b, s.Usage, "the job's own CPU, to take from its supervisor's")
	kib := peak()
	cpu := exits.cpu(b, pid) - time.Duration(s.Usage.CPUUserMS+s.Usage.CPUSystemMS)*time.Millisecond
	return took, kib, cpu, s.Stdout.SHA256
}

// cpuPerGiB is CPU seconds per GiB of the benchmark's output.
func cpuPerGiB(d time.Duration) float64 { return d.Seconds() / (float64(captureSize()) / (1 << 30)) }

// captureSamples is how many samples the capture benchmarks make: more
// than benchkit.MinSamples, as a sample on this kind of shared machine now and then
// costs up to twice as much, on either side, for reasons outside it (the
// fresh page cache a 1 GiB file needs is the likeliest). With five, the
// two sides' medians fell in different modes often enough to turn a
// figure's ratio from 0.86 to 2.26 between two runs of the same code.
const captureSamples = 9

// idleSupervisorPeak is the peak RSS of a detached supervisor whose job
// writes nothing: a job that waits for a file this process creates once
// the first reading of the supervisor's status is in.
func idleSupervisorPeak(b *testing.B, e *env) int64 {
	flag := filepath.Join(b.TempDir(), "go")
	j, err := e.r.Start(context.Background(), []string{fixture(b, "wait-for-file.sh"), flag, "0"}, runner.StartOptions{})
	require.NoError(b, err)
	first := make(chan struct{})
	peak := watchPeakRSS(b, supervisorOf(b, e, j.ID), first)
	select {
	case <-first:
	case <-time.After(time.Minute):
		b.Fatal("no reading of the idle supervisor's status")
	}
	require.NoError(b, os.WriteFile(flag, nil, 0o600))
	e.await(j.ID)
	return peak()
}

// supervisorOf returns the pid of job id's detached supervisor.
func supervisorOf(b *testing.B, e *env, id string) int {
	rec, err := e.store.Get(context.Background(), id)
	require.NoError(b, err)
	require.NotEqual(b, os.Getpid(), rec.SupervisorPID, "Start returns after the supervisor has claimed the job")
	return rec.SupervisorPID
}

// rssPeriod is how often watchPeakRSS reads a supervisor's status. It is
// a sampling period: VmHWM is the kernel's own high-water mark, so a
// reading misses nothing before it; and it is slow on purpose, as a poll
// every millisecond on a two-core machine moved the supervisor's threads
// between cores and doubled the CPU a capture cost, in some runs.
const rssPeriod = 50 * time.Millisecond

// watchPeakRSS reads the VmHWM (peak resident set) of supervisor pid every
// rssPeriod. The returned function, called once its job has settled (the
// supervisor then only exits), reads it a last time if the supervisor is
// still there, stops the readings and returns the highest. first, when
// given, is closed after the first reading.
func watchPeakRSS(b *testing.B, pid int, first chan<- struct{}) func() int64 {
	status := "/proc/" + strconv.Itoa(pid) + "/status"
	var mu sync.Mutex
	var peak int64
	read := func() bool {
		kib, ok := statusKiB(status, "VmHWM:") // false: gone, or a zombie
		if ok {
			mu.Lock()
			peak = max(peak, kib)
			mu.Unlock()
		}
		return ok
	}
	stop := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for read() {
			if first != nil {
				close(first)
				first = nil
			}
			select {
			case <-stop:
				return
			case <-time.After(rssPeriod):
			}
		}
	}()
	return func() int64 {
		read()
		close(stop)
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		require.Positive(b, peak, "no reading of supervisor %d's peak RSS", pid)
		return peak
	}
}

// statusKiB reads one "<key> <n> kB" line of a /proc status file.
func statusKiB(path, key string) (int64, bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// supervisorExits keeps the rusage of each detached supervisor this
// process reaps: its CPU time, read once it has exited, so that nothing
// reads the supervisor's times while it runs.
type supervisorExits struct {
	mu  sync.Mutex
	got map[int]*syscall.Rusage
}

func watchSupervisorExits(b *testing.B) *supervisorExits {
	x := &supervisorExits{got: map[int]*syscall.Rusage{}}
	runner.OnSupervisorExit(b, func(pid int, ru *syscall.Rusage) {
		x.mu.Lock()
		x.got[pid] = ru
		x.mu.Unlock()
	})
	return x
}

// cpu waits for supervisor pid to have exited and returns its CPU time,
// user and system, all its threads, with that of the children it reaped
// (the job's, which the caller takes away).
func (x *supervisorExits) cpu(b *testing.B, pid int) time.Duration {
	deadline := time.Now().Add(time.Minute)
	for {
		x.mu.Lock()
		ru, ok := x.got[pid]
		x.mu.Unlock()
		if ok {
			require.NotNil(b, ru, "supervisor %d's exit state has no rusage", pid)
			return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
		if time.Now().After(deadline) {
			b.Fatalf("supervisor %d still running a minute after its job settled", pid)
		}
		time.Sleep(10 * time.Millisecond) // polls this process's map, not the supervisor
	}
}

// pipeFloor runs argv under testdata/capturefloor (floorBin): into a pipe
// copied into path, hashed beside the copy when hash is set. It returns the
// time that took, the sha256 ("-" without hash) and the floor process's CPU
// time less its command's, as the supervisor's is counted.
func pipeFloor(b *testing.B, floorBin string, argv []string, path string, hash bool) (time.Duration, string, time.Duration) {
	var args []string
	if hash {
		args = append(args, "-hash")
	}
	cmd := exec.Command(floorBin, append(append(args, path), argv...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	require.NoError(b, err, "capturefloor: %s", out.String())
	f := strings.Fields(out.String())
	require.Len(b, f, 3, "capturefloor printed %q", out.String())
	require.Equal(b, strconv.FormatInt(captureSize(), 10), f[0], "the floor copied every byte")
	commandNS, err := strconv.ParseInt(f[2], 10, 64)
	require.NoError(b, err)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return took, f[1], time.Duration(ru.Utime.Nano() + ru.Stime.Nano() - commandNS)
}

// buildCaptureFloor builds testdata/capturefloor as bgcmd is built (static,
// no cgo) into a temporary directory.
func buildCaptureFloor(b *testing.B) string {
	bin := filepath.Join(b.TempDir(), "capturefloor")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/capturefloor")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(b, err, "build the capture floor: %s", out)
	return bin
}

// directFile runs argv with its stdout on the new file path, then fsyncs
// it: no pipe at all. The file is removed afterwards, untimed.
func directFile(b *testing.B, argv []string, path string) time.Duration {
	start := time.Now()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(b, err)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = f
	require.NoError(b, cmd.Run())
	require.NoError(b, f.Sync())
	require.NoError(b, f.Close())
	took := time.Since(start)
	st, err := os.Stat(path)
	require.NoError(b, err)
	require.Equal(b, captureSize(), st.Size())
	require.NoError(b, os.Remove(path))
	return took
}
