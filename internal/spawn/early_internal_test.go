//go:build linux

package spawn

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A supervisor started early from the supervisor binary is let go when the
// run's store turns out to be a PostgreSQL one, which that binary cannot
// open: the runner then starts bgcmd itself.
func TestTakeEarlyLetsGoASupervisorBinaryForPostgres(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	put := func() *Proc {
		conn, sup, err := SocketPair()
		require.NoError(t, err)
		t.Cleanup(func() { sup.Close() })
		r, w, err := os.Pipe()
		require.NoError(t, err)
		t.Cleanup(func() { w.Close() })
		p := &Proc{PID: -1, Path: filepath.Join(filepath.Dir(exe), SupervisorName), Conn: conn, Status: r}
		early.Lock()
		early.p, early.binary = p, exe
		early.Unlock()
		return p
	}
	p := put()
	require.Nil(t, TakeEarly(exe, true))
	_, err = p.Conn.Write([]byte("x"))
	require.Error(t, err, "the one let go was closed")

	p = put()
	require.Same(t, p, TakeEarly(exe, false), "a SQLite store's run takes it")
	p.Close()
}
