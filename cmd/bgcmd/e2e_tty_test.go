package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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

// lockedBuffer is a buffer one goroutine writes while another reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// onTerminalUntil runs bgcmd like onTerminal and, once the terminal shows
// want, calls then (which lets the command end); it returns all the
// terminal showed.
func (h *home) onTerminalUntil(t *testing.T, want string, then func(), args ...string) string {
	t.Helper()
	m, s := openPTY(t)
	defer m.Close()
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = h.root, h.env
	cmd.Stdout, cmd.Stderr = s, s
	require.NoError(t, cmd.Start())
	s.Close()
	var buf lockedBuffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&buf, m) // ends with EIO once the child closes the terminal
	}()
	released := false
	defer func() {
		if !released {
			then() // let the command end when the test fails early
			_ = cmd.Process.Kill()
			<-copied
			_ = cmd.Wait()
		}
	}()
	eventually(t, fmt.Sprintf("the terminal to show %q", want), func() bool { return strings.Contains(buf.String(), want) })
	released = true
	then()
	<-copied
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
	gate := filepath.Join(t.TempDir(), "gate")
	id := h.start(fixture(t, "wait-for-file.sh"), gate, "0")
	release := func() { _ = os.WriteFile(gate, nil, 0o600) }
	// The command runs until the progress line has been shown.
	tty := h.onTerminalUntil(t, "running ", release, "wait", id)
	require.Contains(t, tty, "stdout ")
	require.Contains(t, tty, "exited 0")

	id = h.start(fixture(t, "slow-lines.sh"), "12", "0.1")
	r := h.bgcmd("wait", id)
	require.Equal(t, 0, r.code)
	require.Empty(t, r.stderr, "no progress when piped")
	require.False(t, strings.Contains(r.stdout, "\r"))
}
