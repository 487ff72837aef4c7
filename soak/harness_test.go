package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/testkit"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// soakStamp is the build stamp of the suite's bgcmd and bgcmd-supervisor.
const soakStamp = "soak"

// bgcmdBinary builds the real bgcmd binary, lean, with bgcmd-full and
// bgcmd-supervisor beside it as make build builds them, once per test
// process (into a temporary directory TestMain removes), and returns
// bgcmd's path. With BGCMD_SOAK_RACE=1 all three are built with the race
// detector.
func bgcmdBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "bgcmd-soak-bin-")
		if buildErr != nil {
			return
		}
		// The three binaries of make build, of one build stamp.
		buildBin, buildErr = testkit.BuildRelease("go", buildDir, soakStamp, os.Getenv("BGCMD_SOAK_RACE") == "1")
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// fixture returns the absolute path of a script in the module's testdata.
func fixture(t testing.TB, name string) string { return testkit.Fixture(t, name) }

// fixtures are allowlisted in every policy the suite writes.
var fixtures = []string{"exit-with.sh", "ignore-term.sh", "print-bytes.sh",
	"fork-grandchild.sh", "slow-lines.sh", "kill-self.sh", "wait-for-file.sh"}

// policyFile is a policy the suite writes as TOML.
type policyFile struct {
	Allowed        []string
	DefaultTimeout string
	MaxTimeout     string
	KillGrace      string
	MaxOutputBytes int64
}

// home is one bgcmd home (database, logs, artifacts, policy.toml) with the
// sandbox root its policy names, driven through the real binary.
type home struct {
	t    testing.TB
	bin  string
	dir  string
	root string
	// db is the PostgreSQL DSN the home's store is on ("" = its SQLite file).
	db string
}

// newHome makes a home under dir (a fresh temporary directory when "")
// with pol written to <home>/policy.toml (none when pol is nil).
func newHome(t testing.TB, dir string, pol *policyFile) *home {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	h := &home{t: t, bin: bgcmdBinary(t), dir: dir, root: root}
	if pol != nil {
		h.writePolicy(*pol)
	}
	return h
}

// defaultPolicy allowlists the fixtures and /bin/true with short grace and
// generous ceilings.
func defaultPolicy(t testing.TB) *policyFile {
	p := &policyFile{DefaultTimeout: "2m", MaxTimeout: "10m", KillGrace: "1s", MaxOutputBytes: 16 << 20}
	for _, f := range fixtures {
		p.Allowed = append(p.Allowed, fixture(t, f))
	}
	p.Allowed = append(p.Allowed, "/bin/true", "/bin/grep")
	return p
}

func (h *home) writePolicy(p policyFile) {
	h.t.Helper()
	var b strings.Builder
	b.WriteString("allowed_executables = [")
	for i, a := range p.Allowed {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(a))
	}
	b.WriteString("]\n")
	fmt.Fprintf(&b, "cwd_root = %s\n", strconv.Quote(h.root))
	for _, kv := range [][2]string{{"default_timeout", p.DefaultTimeout}, {"max_timeout", p.MaxTimeout}, {"kill_grace", p.KillGrace}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s = %s\n", kv[0], strconv.Quote(kv[1]))
		}
	}
	if p.MaxOutputBytes > 0 {
		fmt.Fprintf(&b, "max_output_bytes = %d\n", p.MaxOutputBytes)
	}
	require.NoError(h.t, os.MkdirAll(h.dir, 0o700))
	require.NoError(h.t, os.WriteFile(filepath.Join(h.dir, "policy.toml"), []byte(b.String()), 0o600))
}

// dbPath is the home's database file.
func (h *home) dbPath() string { return filepath.Join(h.dir, "bgcmd.db") }

// environ is the environment of every bgcmd the suite runs: the test's own
// minus any BGCMD_* setting, plus this home.
func (h *home) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BGCMD_") && !strings.HasPrefix(kv, "NO_COLOR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "BGCMD_HOME="+h.dir, "NO_COLOR=1")
	if h.db != "" {
		env = append(env, "BGCMD_DB="+h.db)
	}
	return env
}

// command prepares `bgcmd args…` in the sandbox root.
func (h *home) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env = h.environ()
	cmd.Dir = h.root
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// cliResult is what one bgcmd invocation left behind.
type cliResult struct {
	args           []string
	stdout, stderr []byte
	code           int
	took           time.Duration
	// cpu is the CPU time, user and system, of the bgcmd process itself
	// (not of the processes it started, which outlive it).
	cpu time.Duration
	// faults is the count of the bgcmd process's own minor page faults.
	faults int64
}

func (r cliResult) String() string {
	return fmt.Sprintf("bgcmd %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.code,
		clip(r.stdout), clip(r.stderr))
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:1000]) + "…" + string(b[len(b)-1000:])
	}
	return string(b)
}

// run runs `bgcmd args…` to the end. A non-zero exit is a result, not an
// error; an error means the binary could not be run or was killed.
func (h *home) run(ctx context.Context, args ...string) (cliResult, error) {
	cmd := h.command(ctx, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	res := cliResult{args: args, stdout: out.Bytes(), stderr: errb.Bytes(), took: time.Since(start)}
	res.cpu, res.faults = cpuOf(cmd.ProcessState), faultsOf(cmd.ProcessState)
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.Exited():
		res.code = ee.ExitCode()
	default:
		return res, fmt.Errorf("bgcmd %s: %w (stderr: %s)", strings.Join(args, " "), err, clip(errb.Bytes()))
	}
	return res, nil
}

// cpuOf is the CPU time, user and system, of the ended process ps (0 for
// one that never started).
func cpuOf(ps *os.ProcessState) time.Duration {
	if ps == nil {
		return 0
	}
	return ps.UserTime() + ps.SystemTime()
}

// faultsOf is the count of minor page faults of the ended process ps
// itself (0 for one that never started).
func faultsOf(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Minflt
	}
	return 0
}

// mustRun runs bgcmd and fails the test unless it exits with want.
func (h *home) mustRun(want int, args ...string) cliResult {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := h.run(ctx, args...)
	require.NoError(h.t, err)
	require.Equal(h.t, want, res.code, "%s", res)
	return res
}

// openRO opens the home's database read-only, as audit tooling would.
func (h *home) openRO() *jobstore.Store {
	h.t.Helper()
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: h.dbPath(), DSN: h.db, ReadOnly: true})
	require.NoError(h.t, err)
	return st
}

// queryInts runs a read-only query whose columns are all integers.
func queryInts(ctx context.Context, st *jobstore.Store, q string) ([][]int64, error) {
	var out [][]int64
	err := st.Query(ctx, q, func([]string) error { return nil }, func(r jobstore.QueryRow) error {
		row := make([]int64, len(r))
		for i, v := range r {
			switch x := v.(type) {
			case int64:
				row[i] = x
			case nil:
			default:
				return fmt.Errorf("column %d: %T %v is not an integer", i, v, v)
			}
		}
		out = append(out, row)
		return nil
	})
	return out, err
}

// queryStrings runs a read-only query and renders every value as text.
func queryStrings(ctx context.Context, st *jobstore.Store, q string) ([][]string, error) {
	var out [][]string
	err := st.Query(ctx, q, func([]string) error { return nil }, func(r jobstore.QueryRow) error {
		row := make([]string, len(r))
		for i, v := range r {
			if v != nil {
				row[i] = fmt.Sprint(v)
			}
		}
		out = append(out, row)
		return nil
	})
	return out, err
}

// eventually polls cond until it reports true or the deadline passes; the
// last message explains the failure.
func eventually(t testing.TB, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %s", within, what, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// procInfo is what the suite reads from /proc/<pid>/stat.
type procInfo struct {
	pid   int
	state byte
	pgrp  int
	start int64
}

func readProc(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procInfo{}, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 20 {
		return procInfo{}, false
	}
	pgrp, _ := strconv.Atoi(f[2])
	start, _ := strconv.ParseInt(f[19], 10, 64)
	return procInfo{pid: pid, state: f[0][0], pgrp: pgrp, start: start}, true
}

// liveProcs lists every live (not zombie) process of the machine.
func liveProcs() []procInfo {
	ents, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok && p.state != 'Z' && p.state != 'X' {
			out = append(out, p)
		}
	}
	return out
}

// isProcess reports whether pid is alive and started at start (0: any).
func isProcess(pid int, start int64) bool {
	p, ok := readProc(pid)
	return ok && p.state != 'Z' && p.state != 'X' && (start == 0 || p.start == start)
}

// cmdline returns a process's argv joined by spaces.
func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}

// openFDs counts this process's open file descriptors.
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// sigkill sends SIGKILL to pid if it is still the process that started at
// start; it reports whether the signal was sent.
func sigkill(pid int, start int64) bool {
	if pid <= 1 || !isProcess(pid, start) {
		return false
	}
	return syscall.Kill(pid, syscall.SIGKILL) == nil
}

// statusOf decodes the status object a --json command printed.
func statusOf(t testing.TB, res cliResult) *bgcmd.Status {
	t.Helper()
	var s bgcmd.Status
	require.NoError(t, json.Unmarshal(res.stdout, &s), "%s", res)
	require.NotEmpty(t, s.ID, "%s", res)
	return &s
}

func itoa(i int) string { return strconv.Itoa(i) }

// cliBuffer collects a process's output safely while it runs.
type cliBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (c *cliBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.Write(p)
}

func (c *cliBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}
