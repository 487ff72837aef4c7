package runner

import (
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// killTickName is the file beside the database that a kill request made
// on another host touches: every supervisor watches it and reads its job's
// row on a wake, so a request from anywhere is acted on at once. Only kill
// requests touch it (transitions touch EventsTickName), so supervisors are
// not woken by every settle. The row is the truth: supervisors also read it
// every killPoll, for a missed wake or a store whose hosts share no
// filesystem.
const killTickName = "kill.tick"

// killTickPath is the kill tick file of the store's database.
func killTickPath(st *jobstore.Store) string {
	return filepath.Join(filepath.Dir(st.Path()), killTickName)
}

// HostID is the stable id of this runner's host (its home's, see
// internal/hostid): the jobs it supervises and reconciles carry it.
func (r *Runner) HostID() string { return r.store.HostID() }

// Host is this runner's hostname as job rows record it.
func (r *Runner) Host() string { return r.store.Host() }

// ownJob reports whether the job belongs to this runner's host: only then
// may this runner judge its supervisor, signal its pids or read its live
// logs. A row recorded before host ids (host_id ”) that this host did not
// adopt belongs to the host with its hostname.
func (r *Runner) ownJob(rec *jobstore.Record) bool {
	if rec.HostID == "" {
		return rec.Host == r.store.Host()
	}
	return rec.HostID == r.store.HostID()
}

// notifyKill touches the kill tick file after a kill request for another
// host's job: supervisors sharing the store's filesystem wake and read
// their rows. Best effort: they also poll.
func notifyKill(st *jobstore.Store) {
	fd, err := unix.Open(killTickPath(st), unix.O_WRONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0o600)
	if err == nil {
		unix.Close(fd)
	}
}
