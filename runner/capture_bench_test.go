//go:build linux

package runner_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// The capture benchmarks run one command that writes BGCMD_BENCH_CAPTURE_MB
// MiB (default 1024) three ways in every sample, in a rotating order:
//
//   - through bgcmd: a detached supervisor pumps the command's pipes into
//     new log files (cap, tail, hash and index on), fsyncs and banks them;
//   - the pipe floor: the command writes into a pipe (sized as bgcmd sizes
//     its pipes) that this process copies with io.CopyBuffer, through a
//     buffer of bgcmd's read size, into a new file, then fsyncs it. bgcmd
//     cannot skip reading the bytes (it hashes and indexes them), so the
//     copy goes through user space, not splice;
//   - the hashing floor: the pipe floor with the sha256 bgcmd must take of
//     what it keeps, each chunk hashed once written by a second goroutine
//     (as bgcmd hashes on a second core): the least a capture that can
//     prove its output must do, and the floor bgcmd's aims are set against
//     in MB/s and in CPU seconds per GiB;
//   - the direct file: the command writes straight into a new file, then
//     fsync; no pipe, no reader (reported beside the pipe floor).
//
// Each sample also reads the supervisor's peak RSS (VmHWM) by polling its
// /proc status while it runs, and the peak of a supervisor of a job that
// writes nothing, for comparison; and the CPU seconds per GiB of the
// supervisor (cpu-s/GiB) beside those of the pipe floor's copier
// (pipe-cpu-s/GiB): on a shared machine, wall time says little about a
// capture that hashes on a second core, CPU time says what it costs.

// bgcmdPipeSize and bgcmdReadBuf are the pipe size of bgcmd's pumps
// (runner/supervise.go) and the most a capture reads at once (its batch
// size, artifacts/digest.go): the pipe floor uses the same.
const (
	bgcmdPipeSize = 1 << 20
	bgcmdReadBuf  = 256 << 10
)

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
	e := benchEnv(b, true, "/bin/dd", "/usr/bin/head")
	argv := captureArgv(large)
	size := captureSize()
	mbps := func(d time.Duration) float64 { return float64(size) / 1e6 / d.Seconds() }
	floorDir := b.TempDir()
	var s samples
	for i := range sampleCount(b) {
		var bgcmdSum, floorSum string // the same bytes: the same hash
		ways := []func(){
			func() {
				d, peak, cpu, sum := captureDetached(b, e, argv)
				bgcmdSum = sum
				s.op(d)
				s.add("MB/s", mbps(d))
				s.add("peak-rss-KiB", float64(peak))
				s.add("cpu-s/GiB", cpuPerGiB(cpu))
			},
			func() {
				before := selfCPU(b)
				d, _ := pipeFloor(b, argv, filepath.Join(floorDir, fmt.Sprint("pipe", i)), false)
				s.add("pipe-MB/s", mbps(d))
				s.add("pipe-cpu-s/GiB", cpuPerGiB(selfCPU(b)-before))
			},
			func() {
				before := selfCPU(b)
				d, sum := pipeFloor(b, argv, filepath.Join(floorDir, fmt.Sprint("hashed", i)), true)
				floorSum = sum
				s.add("hashed-MB/s", mbps(d))
				s.add("hashed-cpu-s/GiB", cpuPerGiB(selfCPU(b)-before))
			},
			func() {
				s.add("direct-MB/s", mbps(directFile(b, argv, filepath.Join(floorDir, fmt.Sprint("direct", i)))))
			},
		}
		for k := range ways {
			ways[(i+k)%len(ways)]()
		}
		require.Equal(b, floorSum, bgcmdSum, "the hashing floor and bgcmd hashed the same output")
		s.add("idle-peak-rss-KiB", float64(idleSupervisorPeak(b, e)))
	}
	s.report(b)
}

// captureDetached runs argv through a detached supervisor until the job has
// settled and returns the time that took, the supervisor's peak RSS, the
// CPU time it used (user and system, all its threads; the job's own CPU is
// not in it) and the sha256 of the output it banked.
func captureDetached(b *testing.B, e *env, argv []string) (time.Duration, int64, time.Duration, string) {
	ctx := context.Background()
	start := time.Now()
	j, err := e.r.Start(ctx, argv, runner.StartOptions{})
	require.NoError(b, err)
	var cpu time.Duration
	peak := watchPeakRSS(b, e, j.ID, nil, &cpu)
	s, err := e.r.Await(ctx, j.ID, 10*time.Minute)
	took := time.Since(start)
	require.NoError(b, err)
	require.Equal(b, bgcmd.StateExited, s.State, "%+v", s)
	require.Equal(b, captureSize(), s.Stdout.Bytes)
	p := peak() // cpu is set once it returns
	return took, p, cpu, s.Stdout.SHA256
}

// cpuPerGiB is CPU seconds per GiB of the benchmark's output.
func cpuPerGiB(d time.Duration) float64 { return d.Seconds() / (float64(captureSize()) / (1 << 30)) }

// selfCPU is this process's CPU time so far (the pipe floor's copy runs
// here; its command's CPU is not counted, as the job's is not for bgcmd).
func selfCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	require.NoError(b, unix.Getrusage(unix.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU reads a process's CPU time (utime + stime) from /proc/<pid>/stat;
// false once the process is gone.
func procCPU(pid int) (time.Duration, bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / ticks, true
}

// idleSupervisorPeak is the peak RSS of a detached supervisor whose job
// writes nothing: a job that waits for a file this process creates once
// the first reading of the supervisor's status is in.
func idleSupervisorPeak(b *testing.B, e *env) int64 {
	flag := filepath.Join(b.TempDir(), "go")
	j, err := e.r.Start(context.Background(), []string{fixture(b, "wait-for-file.sh"), flag, "0"}, runner.StartOptions{})
	require.NoError(b, err)
	first := make(chan struct{})
	peak := watchPeakRSS(b, e, j.ID, first, nil)
	select {
	case <-first:
	case <-time.After(time.Minute):
		b.Fatal("no reading of the idle supervisor's status")
	}
	require.NoError(b, os.WriteFile(flag, nil, 0o600))
	e.await(j.ID)
	return peak()
}

// watchPeakRSS polls the VmHWM (peak resident set) of job id's detached
// supervisor until the supervisor is gone. The returned function waits for
// that and returns the last reading, the peak over the job's life up to
// the moment the supervisor exited. first, when given, is closed after the
// first reading; cpu, when given, holds the supervisor's last CPU time read
// once the returned function has returned.
func watchPeakRSS(b *testing.B, e *env, id string, first chan<- struct{}, cpu *time.Duration) func() int64 {
	rec, err := e.store.Get(context.Background(), id)
	require.NoError(b, err)
	pid := rec.SupervisorPID
	require.NotEqual(b, os.Getpid(), pid, "Start returns after the supervisor has claimed the job")
	status := "/proc/" + strconv.Itoa(pid) + "/status"
	done := make(chan int64, 1)
	go func() {
		var peak int64
		for {
			if cpu != nil {
				if t, ok := procCPU(pid); ok {
					*cpu = t // a zombie still reports its times
				}
			}
			kib, ok := statusKiB(status, "VmHWM:")
			if !ok { // gone, or a zombie (no memory left to report)
				done <- peak
				return
			}
			peak = max(peak, kib)
			if first != nil {
				close(first)
				first = nil
			}
			time.Sleep(time.Millisecond) // sampling period, not a synchronisation
		}
	}()
	return func() int64 {
		select {
		case p := <-done:
			require.Positive(b, p, "no reading of supervisor %d's peak RSS", pid)
			return p
		case <-time.After(time.Minute):
			b.Fatalf("supervisor %d still running a minute after its job settled", pid)
			return 0
		}
	}
}

// statusKiB reads one "<key> <n> kB" line of a /proc status file.
func statusKiB(path, key string) (int64, bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == key {
			n, err := strconv.ParseInt(f[1], 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// pipeFloor runs argv with its stdout on a pipe and copies the pipe into
// the new file path, then fsyncs it: the least a capture must do. With
// hash, a second goroutine also hashes each chunk once it is written, and
// the sha256 is returned (copyHashed). The file is removed afterwards,
// untimed.
func pipeFloor(b *testing.B, argv []string, path string, hash bool) (time.Duration, string) {
	start := time.Now()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(b, err)
	pr, pw, err := os.Pipe()
	require.NoError(b, err)
	_, _ = unix.FcntlInt(pw.Fd(), unix.F_SETPIPE_SZ, bgcmdPipeSize) // as bgcmd: the kernel may grant less
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = pw
	require.NoError(b, cmd.Start())
	require.NoError(b, pw.Close())
	// Plain Reader and Writer: io.Copy would splice in the kernel, never
	// seeing the bytes bgcmd has to read.
	var n int64
	var sum string
	if hash {
		n, sum, err = copyHashed(f, pr)
	} else {
		n, err = io.CopyBuffer(struct{ io.Writer }{f}, struct{ io.Reader }{pr}, make([]byte, bgcmdReadBuf))
	}
	require.NoError(b, err)
	require.NoError(b, cmd.Wait())
	require.NoError(b, f.Sync())
	require.NoError(b, f.Close())
	took := time.Since(start)
	require.NoError(b, pr.Close())
	require.Equal(b, captureSize(), n)
	require.NoError(b, os.Remove(path))
	return took, sum
}

// copyHashed copies r into w through buffers of bgcmd's read size and
// hands each chunk, once written, to a goroutine that hashes it, so the
// hash runs beside the copy as bgcmd's does. It returns the bytes copied
// and their sha256 in hex.
func copyHashed(w io.Writer, r io.Reader) (int64, string, error) {
	const depth = 4 // chunks in flight between the copy and the hash
	free := make(chan []byte, depth)
	for range depth {
		free <- make([]byte, bgcmdReadBuf)
	}
	written := make(chan []byte, depth)
	sum := make(chan string)
	go func() {
		h := sha256.New()
		for chunk := range written {
			h.Write(chunk)
			free <- chunk[:cap(chunk)]
		}
		sum <- hex.EncodeToString(h.Sum(nil))
	}()
	var n int64
	var err error
	for err == nil {
		buf := <-free
		m, rerr := r.Read(buf)
		if m > 0 {
			if _, werr := w.Write(buf[:m]); werr != nil {
				err = werr
			}
			n += int64(m)
			written <- buf[:m]
		} else {
			free <- buf
		}
		if rerr != nil {
			if rerr != io.EOF {
				err = rerr
			}
			break
		}
	}
	close(written)
	return n, <-sum, err
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
