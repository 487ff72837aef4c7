package earlysup

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWantsSupervisorOnlyForARunThatMayStartOne(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"run", "--", "/usr/bin/make"}, true},
		{[]string{"run", "--timeout", "5m", "--", "/usr/bin/make", "--help"}, true}, // the command's own flag
		{[]string{"run", "/usr/bin/make"}, true},
		{[]string{"run", "--help"}, false},
		{[]string{"run", "-h", "--", "/usr/bin/make"}, false},
		{[]string{"run", "/usr/bin/make", "--help"}, false}, // not told apart: left to the runner
		{[]string{"run"}, false},
		{[]string{"--json", "run", "--", "/usr/bin/make"}, false}, // global flags first: left to the runner
		{[]string{"status", "run"}, false},
		{[]string{"__supervise"}, false},
		{nil, false},
	} {
		require.Equal(t, tc.want, wantsSupervisor(tc.args), "%q", tc.args)
	}
}

func TestNamesDBOnlyAmongRunsOwnFlags(t *testing.T) {
	require.True(t, namesDB([]string{"--db", "postgres://h/db", "--", "/usr/bin/make"}))
	require.True(t, namesDB([]string{"--timeout", "5m", "--db=postgres://h/db", "/usr/bin/make"}))
	require.False(t, namesDB([]string{"--", "/usr/bin/env", "--db"}), "the command's own argument")
	require.False(t, namesDB([]string{"--dbx", "/usr/bin/make"}))
	require.False(t, namesDB(nil))
}
