//go:build linux

package runner

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadProcStatReadsWhatTheKernelWrites(t *testing.T) {
	st, err := readProcStat(os.Getpid())
	require.NoError(t, err)
	b, err := os.ReadFile("/proc/self/stat")
	require.NoError(t, err)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	require.Equal(t, f[0][0], st.state)
	require.Equal(t, strconv.Itoa(os.Getppid()), f[1])
	require.Equal(t, os.Getppid(), st.ppid)
	require.Equal(t, f[2], strconv.Itoa(st.pgrp))
	require.Equal(t, f[3], strconv.Itoa(st.session))
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
