package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/launch"
	"github.com/bgcmd/bgcmd/internal/testkit"
)

// binary is the bgcmd built once for the end-to-end tests, lean, with
// bgcmd-full and bgcmd-supervisor beside it, as make build builds them.
var binary string

// e2eStamp is the build stamp of binary, bgcmd-full and bgcmd-supervisor.
const e2eStamp = "e2e"

// TestMain builds the binary once; the tests run it as a user would. The
// binary is built the way this test binary was: with the race detector when
// it has it, and with coverage when the tests measure it, its data written
// to the tests' own coverage directory so that what the binary runs counts
// in the package's figure.
func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "bgcmd-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "bgcmd")
	// The three binaries, with the same build stamp, as make build makes
	// them: bgcmd lean, bgcmd-full beside it (every test of mcp, ui, git
	// and PostgreSQL stores, and every first command in a new home, runs
	// through the lean bgcmd's hand-over to it), and bgcmd-supervisor,
	// which every detached supervisor of a SQLite store the tests start is.
	args := []string{"build", "-ldflags", testkit.StampFlag(e2eStamp)}
	if raceEnabled {
		args = append(args, "-race")
	}
	if coverDir := testCoverDir(); coverDir != "" {
		args = append(args, "-cover", "-covermode="+testing.CoverMode(), "-coverpkg=.")
		// Every bgcmd the tests start (and the detached supervisors it
		// starts in turn) writes its counters there.
		os.Setenv("GOCOVERDIR", coverDir)
	}
	for _, b := range []struct{ out, tags string }{
		{binary, launch.LeanTag},
		{filepath.Join(dir, launch.FullName), ""},
	} {
		if err == nil {
			build := exec.Command(goTool(), append(args, "-tags", b.tags, "-o", b.out, ".")...)
			build.Stdout, build.Stderr = os.Stderr, os.Stderr
			err = build.Run()
		}
	}
	if err == nil {
		err = testkit.BuildSupervisor(goTool(), dir, e2eStamp, raceEnabled)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "build bgcmd:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testCoverDir is the directory whose coverage data `go test -cover`
// merges into this package's figure ("" when coverage is off): the
// -test.gocoverdir flag, else $GOCOVERDIR.
func testCoverDir() string {
	if testing.CoverMode() == "" {
		return ""
	}
	if f := flag.Lookup("test.gocoverdir"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	return os.Getenv("GOCOVERDIR")
}

// goTool finds the go command that runs these tests.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// fixture is the absolute path of a testdata script.
func fixture(t testing.TB, name string) string { return testkit.Fixture(t, name) }

// home is one user's world: a state directory, a sandbox root and a policy.
type home struct {
	t    *testing.T
	dir  string
	root string
	env  []string
	// bin is the bgcmd this home runs: binary when empty.
	bin string
}

// newHome makes a home whose policy (at the default <home>/policy.toml)
// allows the fixtures, /usr/bin/env and a tool that is not installed.
func newHome(t *testing.T) *home {
	t.Helper()
	h := &home{t: t, dir: t.TempDir(), root: t.TempDir()}
	testkit.Cleanup(t, h.dir) // after TempDir: runs before the removal
	// A home of one's own is private (bgcmd tightens a 0755 one and says so).
	require.NoError(t, os.Chmod(h.dir, 0o700))
	allowed := []string{"/usr/bin/env", "/nonexistent/bin/tool"}
	for _, f := range []string{"exit-with.sh", "ignore-term.sh", "print-bytes.sh", "slow-lines.sh",
		"wait-for-file.sh", "kill-self.sh"} {
		allowed = append(allowed, fixture(t, f))
	}
	quoted, _ := json.Marshal(allowed)
	// The default timeout is long: a job a test holds running (waiting
	// for a file, say) must still run when the test looks at it, however
	// busy the machine. Tests of timeouts give their own.
	h.writePolicy(fmt.Sprintf("allowed_executables = %s\ncwd_root = %q\ndefault_timeout = \"10m\"\nkill_grace = \"1s\"\n",
		quoted, h.root))
	h.env = []string{"PATH=/usr/bin:/bin", "HOME=" + h.dir, "BGCMD_HOME=" + h.dir, "LANG=C.UTF-8"}
	if d, ok := os.LookupEnv("GOCOVERDIR"); ok {
		h.env = append(h.env, "GOCOVERDIR="+d) // set by TestMain when measuring coverage
	}
	return h
}

func (h *home) writePolicy(text string) {
	h.t.Helper()
	require.NoError(h.t, os.WriteFile(filepath.Join(h.dir, "policy.toml"), []byte(text), 0o600))
}

// result is one bgcmd run.
type result struct {
	stdout, stderr string
	code           int
}

// bgcmd runs the binary in the sandbox root with the home's environment
// plus extra "K=V" entries given before the arguments as env:K=V.
func (h *home) bgcmd(args ...string) result {
	h.t.Helper()
	env := append([]string{}, h.env...)
	for len(args) > 0 && strings.HasPrefix(args[0], "env:") {
		env = append(env, strings.TrimPrefix(args[0], "env:"))
		args = args[1:]
	}
	return h.runIn(h.root, env, args)
}

// runIn runs bgcmd in dir with exactly env and waits for it.
func (h *home) runIn(dir string, env, args []string) result {
	h.t.Helper()
	bin := binary
	if h.bin != "" {
		bin = h.bin
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return resultOf(h.t, cmd.Run(), &out, &errb)
}

// resultOf is a finished bgcmd's result: its exit code, from err when it
// is an exit status; any other error fails the test.
func resultOf(t testing.TB, err error, out, errb *bytes.Buffer) result {
	t.Helper()
	res := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return res
}

// ok runs bgcmd and requires exit 0.
func (h *home) ok(args ...string) string {
	h.t.Helper()
	r := h.bgcmd(args...)
	require.Equal(h.t, 0, r.code, "bgcmd %v: stdout %q stderr %q", args, r.stdout, r.stderr)
	return r.stdout
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// start runs `bgcmd run -- argv…` and returns the job id.
func (h *home) start(args ...string) string {
	h.t.Helper()
	id := strings.TrimSpace(h.ok(append([]string{"run", "--"}, args...)...))
	require.Regexp(h.t, uuidRE, id)
	return id
}

// status returns the job's status object (marking a settled job read).
func (h *home) status(id string) map[string]any {
	h.t.Helper()
	var s map[string]any
	require.NoError(h.t, json.Unmarshal([]byte(h.ok("--json", "status", id)), &s))
	return s
}

// peekState returns the job's state without marking it read.
func (h *home) peekState(id string) string {
	h.t.Helper()
	out := h.ok("sql", "--csv", "SELECT state FROM jobs WHERE id = '"+id+"'")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(h.t, lines, 2, out)
	return lines[1]
}

// eventually polls cond until it holds, failing after a deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(pollDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// jsonLines decodes JSON Lines.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// pollDeadline bounds how long a poll waits for what a test expects before
// the test fails. It bounds only a failure: a poll returns as soon as its
// condition holds, so it is generous for a loaded machine (two cores, the
// race detector, many tests at once).
const pollDeadline = 2 * time.Minute
