package jobstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// received waits for a wake on c, failing after a bound far above any
// delivery (nothing else wakes c: the stores here do not poll).
func received(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(30 * time.Second):
		t.Fatalf("no notice of %s within 30s", what)
	}
}

// drained empties c of a pending wake.
func drained(c <-chan struct{}) {
	select {
	case <-c:
	default:
	}
}

// TestNoticesTravelBetweenHostsOnPostgres: two stores on one database (two
// hosts): a transition committed by A wakes B's event watch; a kill
// request recorded by B wakes A's watch of that job's kill and not the
// watch of another job. On SQLite
// the watches are nil channels (the tick files serve there).
func TestNoticesTravelBetweenHostsOnPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lite := openTest(t, jobstore.Options{})
	c, stop := lite.WatchEvents()
	require.Nil(t, c, "SQLite has no listener")
	stop()
	c, stop = lite.WatchKill("x")
	require.Nil(t, c)
	stop()
	require.Zero(t, lite.ListenerConnects())
	onPostgres(t, func(t *testing.T) {
		dsn := freshPGDatabase(t)
		a := openTest(t, jobstore.Options{DSN: dsn, Host: "a", HostID: "host-a"})
		b := openTest(t, jobstore.Options{DSN: dsn, Host: "b", HostID: "host-b"})

		events, stop := b.WatchEvents()
		defer stop()
		require.Eventually(t, func() bool { return b.ListenerConnects() == 1 }, 30*time.Second, 10*time.Millisecond)
		drained(events) // the wake of the connect

		j := newJob("s")
		require.NoError(t, a.Create(ctx, j))
		received(t, events, "a job created on host A")

		other := newJob("s")
		require.NoError(t, a.Create(ctx, other))
		received(t, events, "a second job")
		kills, stopKills := a.WatchKill(j.ID)
		defer stopKills()
		otherKills, stopOther := a.WatchKill(other.ID)
		defer stopOther()
		require.Eventually(t, func() bool { return a.ListenerConnects() == 1 }, 30*time.Second, 10*time.Millisecond)
		received(t, kills, "the watch's start (a first read)")
		drained(kills)
		drained(otherKills)

		_, err := b.RequestKill(ctx, j.ID, "SIGTERM")
		require.NoError(t, err)
		received(t, kills, "a kill request made on host B")

		code := 0
		_, err = a.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code})
		require.NoError(t, err)
		received(t, events, "a settle on host A")
		select {
		case <-otherKills:
			t.Fatal("the other job's kill watch woke for a request it was not named in")
		default:
		}
	})
}
