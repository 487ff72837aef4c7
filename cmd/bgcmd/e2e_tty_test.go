package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY returns a new pseudo-terminal pair, or skips the test when the
// machine has none.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pty: %v", err)
	}
	return m, s
}

// onTerminal runs bgcmd with stdout and stderr on a terminal and returns
// what the terminal showed.
func (h *home) onTerminal(t *testing.T, env []string, args ...string) string {
	t.Helper()
	m, s := openPTY(t)
	defer m.Close()
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = h.root, append(append([]string{}, h.env...), env...)
	cmd.Stdout, cmd.Stderr = s, s
	require.NoError(t, cmd.Start())
	s.Close()
	var buf bytes.Buffer
	_, _ = io.Copy(&buf, m) // ends with EIO once the child closes the terminal
	require.NoError(t, cmd.Wait())
	return buf.String()
}

func TestColourOnlyOnATerminalAndNeverWithNoColor(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "exit-with.sh"), "0")
	h.ok("wait", id)

	for _, args := range [][]string{{"list"}, {"status", id}, {"wait", id}, {"sql", "SELECT NULL"}, {"output", id, "--grep", "out"}} {
		r := h.bgcmd(args...)
		require.Equal(t, 0, r.code)
		require.NotContains(t, r.stdout+r.stderr, "\x1b", "no escape codes when piped: %v", args)
		r = h.bgcmd(append([]string{"env:NO_COLOR=1"}, args...)...)
		require.NotContains(t, r.stdout+r.stderr, "\x1b")
	}

	tty := h.onTerminal(t, nil, "list")
	require.Contains(t, tty, "\x1b[32mexited 0\x1b[0m", "a terminal gets colour")
	require.Contains(t, tty, "\x1b[1mID")
	require.NotContains(t, h.onTerminal(t, []string{"NO_COLOR=1"}, "list"), "\x1b", "NO_COLOR turns colour off on a terminal too")
	require.NotContains(t, h.onTerminal(t, []string{"NO_COLOR=1"}, "status", id), "\x1b")
}

func TestWaitShowsProgressOnATerminalOnly(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "slow-lines.sh"), "12", "0.1")
	tty := h.onTerminal(t, nil, "wait", id)
	require.Contains(t, tty, "running ", "a progress line while it runs")
	require.Contains(t, tty, "stdout ")
	require.Contains(t, tty, "exited 0")

	id = h.start(fixture(t, "slow-lines.sh"), "12", "0.1")
	r := h.bgcmd("wait", id)
	require.Equal(t, 0, r.code)
	require.Empty(t, r.stderr, "no progress when piped")
	require.False(t, strings.Contains(r.stdout, "\r"))
}
