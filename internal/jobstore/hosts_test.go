package jobstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/hostid"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// twoHosts opens two stores on one database file, as two machines sharing
// one store do: both with the same hostname, each with its own host id.
func twoHosts(t *testing.T) (a, b *jobstore.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	a = openTest(t, jobstore.Options{Path: path, Host: "build", HostID: uuid.NewString()})
	b = openTest(t, jobstore.Options{Path: path, Host: "build", HostID: uuid.NewString()})
	return a, b
}

func TestHostsWithOneHostnameNeverSeeEachOthersRunningJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := twoHosts(t)
	ja, jb := newJob("s"), newJob("s")
	require.NoError(t, a.Create(ctx, ja))
	require.NoError(t, b.Create(ctx, jb))
	require.Equal(t, a.HostID(), ja.HostID)
	got, err := a.Get(ctx, jb.ID)
	require.NoError(t, err)
	require.Equal(t, "build", got.Host)
	require.Equal(t, b.HostID(), got.HostID)

	for _, c := range []struct {
		st   *jobstore.Store
		want string
	}{{a, ja.ID}, {b, jb.ID}} {
		recs, err := c.st.RunningOnHost(ctx)
		require.NoError(t, err)
		require.Len(t, recs, 1, "the same hostname is not the same host")
		require.Equal(t, c.want, recs[0].ID)
	}
}

func TestCountersCountTheSessionOnEveryHost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := twoHosts(t)
	require.NoError(t, a.Create(ctx, newJob("s")))
	require.NoError(t, b.Create(ctx, newJob("s")))
	require.NoError(t, b.Create(ctx, newJob("other")))
	for _, st := range []*jobstore.Store{a, b} {
		c, err := st.Counters(ctx, "s")
		require.NoError(t, err)
		require.Equal(t, 2, c.Running, "a session's running jobs on both hosts")
	}
}

func TestRequestKillRecordsTheRequestingHost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := twoHosts(t)
	j := newJob("s")
	require.NoError(t, a.Create(ctx, j))
	rec, err := b.RequestKill(ctx, j.ID, "SIGTERM")
	require.NoError(t, err)
	require.Equal(t, "SIGTERM", rec.KillSignal)
	require.Equal(t, b.HostID(), rec.KillHostID)
	require.Equal(t, "build", rec.KillHost)
}

func TestRowsFromBeforeHostIDsAreAdoptedByTheirHostname(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "bgcmd.db")
	old := openTest(t, jobstore.Options{Path: path, Host: "oldbox"})
	mine, theirs := newJob("s"), newJob("s")
	require.NoError(t, old.Create(ctx, mine))
	require.NoError(t, old.Create(ctx, theirs))
	require.NoError(t, old.Close())
	db := openRaw(t, path)
	_, err := db.Exec(`UPDATE jobs SET host_id = ''`)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE jobs SET host = 'elsewhere' WHERE id = ?`, theirs.ID)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	// Default host id: the file beside the database, created once.
	s := openTest(t, jobstore.Options{Path: path, Host: "oldbox"})
	id, err := hostid.Load(dir)
	require.NoError(t, err)
	require.Equal(t, id.ID, s.HostID())
	fi, err := os.Stat(filepath.Join(dir, hostid.FileName))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	recs, err := s.RunningOnHost(ctx)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, mine.ID, recs[0].ID, "this hostname's old rows are this host's")
	other, err := s.Get(ctx, theirs.ID)
	require.NoError(t, err)
	require.Empty(t, other.HostID, "another hostname's old rows wait for their own host")
	require.Equal(t, bgcmd.StateRunning, other.State)
}
