package soak

import (
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

var sigIgnLine = regexp.MustCompile(`(?m)^SigIgn:\s*([0-9a-f]+)$`)

// TestDetachedJobKeepsSignalDefaults is the regression test for a bug the
// soak found: the detached supervisor ignored SIGHUP, SIGINT and SIGPIPE
// with signal.Ignore, and ignored dispositions survive exec, so every
// command it started ran with them ignored too. `yes | head -c N` then
// printed "yes: standard output: Broken pipe" on stderr (a byte-exactness
// violation), and a command that sends itself SIGHUP or SIGINT did not die.
// A supervised command must see the signal dispositions its starter had.
func TestDetachedJobKeepsSignalDefaults(t *testing.T) {
	h := newHome(t, "", defaultPolicy(t))
	res := h.mustRun(0, "--json", "run", "--wait", "--", "/bin/grep", "SigIgn", "/proc/self/status")
	res = h.mustRun(0, "output", statusOf(t, res).ID, "--raw")
	m := sigIgnLine.FindSubmatch(res.stdout)
	require.NotNil(t, m, "%s", res)
	own, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	want := sigIgnLine.FindSubmatch(own)
	require.NotNil(t, want)
	require.Equal(t, string(want[1]), string(m[1]),
		"the command's ignored-signal mask must be its starter's (bits 0, 1, 12 are SIGHUP, SIGINT, SIGPIPE)")

	// The symptom the soak saw: print-bytes.sh's `yes` must die of SIGPIPE
	// quietly, leaving stderr empty.
	res = h.mustRun(0, "--json", "run", "--wait", "--", fixture(t, "print-bytes.sh"), "100000")
	id := statusOf(t, res).ID
	out := h.mustRun(0, "output", id, "--stream", "stderr", "--raw")
	require.Empty(t, string(out.stdout), "stderr of print-bytes.sh")

	// And a command that sends itself SIGHUP dies of it (unless this test
	// was started with SIGHUP ignored, under nohup: then so is the
	// command, as TestDetachedJobKeepsAnIgnoredSignalIgnored checks).
	if !signal.Ignored(syscall.SIGHUP) {
		res = h.mustRun(128+1, "--json", "run", "--wait", "--", fixture(t, "kill-self.sh"), "HUP")
		require.Equal(t, "SIGHUP", statusOf(t, res).Signal)
	}
}

// TestDetachedJobKeepsAnIgnoredSignalIgnored: a bgcmd started with SIGHUP
// ignored (under nohup, say) starts its commands with SIGHUP ignored too:
// the command sees its starter's dispositions, neither more nor fewer
// ignored signals. Not parallel: it ignores SIGHUP in this process for the
// run it starts.
func TestDetachedJobKeepsAnIgnoredSignalIgnored(t *testing.T) {
	h := newHome(t, "", defaultPolicy(t))
	if !signal.Ignored(syscall.SIGHUP) {
		signal.Ignore(syscall.SIGHUP)
		defer signal.Reset(syscall.SIGHUP)
	}
	res := h.mustRun(0, "--json", "run", "--wait", "--", "/bin/grep", "SigIgn", "/proc/self/status")
	res = h.mustRun(0, "output", statusOf(t, res).ID, "--raw")
	m := sigIgnLine.FindSubmatch(res.stdout)
	require.NotNil(t, m, "%s", res)
	mask, err := strconv.ParseUint(string(m[1]), 16, 64)
	require.NoError(t, err)
	require.NotZero(t, mask&1, "SIGHUP (bit 0) is ignored by the command: %s", m[1])

	// The command survives the SIGHUP it sends itself.
	res = h.mustRun(0, "--json", "run", "--wait", "--", fixture(t, "kill-self.sh"), "HUP")
	require.Equal(t, bgcmd.StateExited, statusOf(t, res).State)
}
