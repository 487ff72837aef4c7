//go:build linux

package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

func TestProcWakeNamesOnlyAProcessOfAHost(t *testing.T) {
	host := jobstore.NewID()
	name := procWakeName(host, 4242, 1234567)
	h, pid, start, ok := procWakeOwner(name)
	require.True(t, ok, name)
	require.Equal(t, host, h)
	require.Equal(t, 4242, pid)
	require.EqualValues(t, 1234567, start)
	for _, bad := range []string{"", "p-", host, "p-" + host, "p-" + host + "-12", "p-" + host + "-x-1",
		"p-" + host + "-1-1/../x", "p-../../../../etc/passwd-1-1", "p-" + host + "-01-1"} {
		_, _, _, ok := procWakeOwner(bad)
		require.False(t, ok, "%q names no process", bad)
	}
	require.Empty(t, procWakeName("../x", 1, 1), "a host id that is no id names nothing")
	require.Empty(t, procWakeName(host, 0, 1))
}
