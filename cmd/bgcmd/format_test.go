package main

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

func TestSizesAndDurationsReadLikePeopleWriteThem(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"1048576": 1 << 20, "10MiB": 10 << 20, "10mib": 10 << 20,
		"1G": 1 << 30, "512KiB": 512 << 10, "1.5M": 3 << 19, "20MB": 20e6, "7B": 7, " 3 k": 3 << 10} {
		got, err := parseSize("--max-output", in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "MiB", "10 parsecs", "-1", "0", "0.5", "1.2.3M", "1e3"} {
		_, err := parseSize("--max-output", in)
		var ue *usageError
		require.True(t, errors.As(err, &ue), "%q: %v", in, err)
	}
	for in, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3565158: "3.4 MiB",
		50 << 20: "50 MiB", 5 << 40: "5.0 TiB"} {
		require.Equal(t, want, fmtBytes(in))
	}
	for in, want := range map[time.Duration]string{350 * time.Millisecond: "350ms", 1234 * time.Millisecond: "1.2s",
		42 * time.Second: "42s", 184 * time.Second: "3m04s", 123 * time.Minute: "2h03m", 76 * time.Hour: "3d04h"} {
		require.Equal(t, want, fmtDuration(in))
	}
	_, err := parseDuration("--timeout", "10")
	require.ErrorContains(t, err, "needs a unit, e.g. 10s")
}

func TestJobExitCodes(t *testing.T) {
	t.Parallel()
	code := func(n int) *int { return &n }
	for _, tc := range []struct {
		s    bgcmd.Status
		want int
	}{
		{bgcmd.Status{State: bgcmd.StateExited, ExitCode: code(0)}, 0},
		{bgcmd.Status{State: bgcmd.StateExited, ExitCode: code(42)}, 42},
		{bgcmd.Status{State: bgcmd.StateExited, Signal: "SIGSEGV"}, 139},
		{bgcmd.Status{State: bgcmd.StateTimeout}, 124},
		{bgcmd.Status{State: bgcmd.StateOutputLimit}, 125},
		{bgcmd.Status{State: bgcmd.StateOrphaned}, 126},
		{bgcmd.Status{State: bgcmd.StateStartFailed}, 127},
		{bgcmd.Status{State: bgcmd.StateKilled, Signal: "SIGTERM"}, 137},
		{bgcmd.Status{State: bgcmd.StateRunning}, 5},
	} {
		require.Equal(t, tc.want, jobExitCode(&tc.s), "%+v", tc.s)
	}
}

func TestTablesAlignAndNeverCarryEscapesWithoutStyle(t *testing.T) {
	t.Parallel()
	tb := &table{header: []string{"A", "LONGER", "LAST"}}
	tb.add(cell{"xxxx", sgrRed}, cell{"y", ""}, cell{"a long last cell", ""})
	var b bytes.Buffer
	require.NoError(t, tb.write(&b, style{}, 0))
	require.Equal(t, "A     LONGER  LAST\nxxxx  y       a long last cell\n", b.String())
	b.Reset()
	require.NoError(t, tb.write(&b, style{on: true}, 20))
	require.Equal(t, "\x1b[1mA\x1b[0m     \x1b[1mLONGER\x1b[0m  \x1b[1mLAST\x1b[0m\n\x1b[31mxxxx\x1b[0m  y       a lon…\n", b.String())
	require.Equal(t, `a\nb\x1b`, oneLine("a\nb\x1b"))
}
