//go:build linux

package runner

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReadProcStatReadsWhatTheKernelWrites compares readProcStat with the
// kernel's own line for a zombie child: every field it parses is fixed once
// the child has exited and before it is reaped, where a live process's
// state flips between running and sleeping from one read to the next.
func TestReadProcStatReadsWhatTheKernelWrites(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "testdata", "exit-with.sh"))
	require.NoError(t, err)
	cmd := exec.Command(script, "0") // the test runs in the package's directory
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = cmd.Wait() })

	var st procStat
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st, err = readProcStat(pid)
		require.NoError(t, err)
		if st.state == 'Z' {
			break
		}
		require.True(t, time.Now().Before(deadline), "pid %d never became a zombie: state %c", pid, st.state)
	}

	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	require.Equal(t, "Z", f[0])
	require.Equal(t, os.Getpid(), st.ppid)
	require.Equal(t, f[1], strconv.Itoa(st.ppid))
	require.Equal(t, f[2], strconv.Itoa(st.pgrp))
	require.Equal(t, f[3], strconv.Itoa(st.session))
	require.Equal(t, syscall.Getpgrp(), st.pgrp)
	require.Equal(t, f[19], strconv.FormatInt(st.start, 10))
	require.NotZero(t, st.start)

	_, err = readProcStat(1 << 30) // above pid_max: no such process
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func TestReadSmallFileReadsAFileLargerThanItsBuffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	want := bytes.Repeat([]byte("0123456789"), 100)
	require.NoError(t, os.WriteFile(path, want, 0o600))
	got, err := readSmallFile(path, make([]byte, 64))
	require.NoError(t, err)
	require.Equal(t, want, got)
	got, err = readSmallFile(path, make([]byte, 4096))
	require.NoError(t, err)
	require.Equal(t, want, got)
}
