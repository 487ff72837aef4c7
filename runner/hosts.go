package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// killTickName is the file beside the database that a kill request made
// on another host touches, for supervisors of an older bgcmd, which
// watched it. A supervisor now is woken by a datagram on its job's wake
// socket, in the folder beside the database (wakeDirOf), so a request from
// any host sharing that folder is acted on at once. On PostgreSQL the
// request also travels by NOTIFY (see jobstore.Store.WatchKill), so hosts
// that share no filesystem are woken at once too. The row is the truth:
// supervisors also read it every killPoll, for a missed wake.
const killTickName = "kill.tick"

// killTickPath is the kill tick file of the store's database.
func killTickPath(st *jobstore.Store) string {
	return besideDB(st, killTickName)
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
// host's job: supervisors of an older bgcmd sharing the store's folder
// watched it, woke and read their rows. Best effort: they also poll.
func notifyKill(st *jobstore.Store) { touch(killTickPath(st)) }

// livePublishEvery bounds how often a supervisor publishes its job's live
// output for other hosts (only while the output grows, and only when the
// store shares artifacts).
const livePublishEvery = 2 * time.Second

// publishLive records the job's tail preview and output sizes in the store
// for the other hosts sharing it, at most every livePublishEvery and only
// when the logs grew. Best effort: the live logs stay the truth here.
func (s *supervisor) publishLive(ctx context.Context) {
	if !s.store.SharesArtifacts() {
		return
	}
	now := s.now()
	if !s.livePublished.IsZero() && now.Sub(s.livePublished) < livePublishEvery {
		return
	}
	var sources [2]artifacts.Source
	var sizes [2]int64
	for i, st := range []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr} {
		p := filepath.Join(s.dir, string(st)+".log")
		sources[i] = artifacts.Source{Path: p, IndexPath: p + ".idx"}
		if fi, err := os.Stat(p); err == nil {
			sizes[i] = fi.Size()
		}
	}
	if sizes == s.liveSizes {
		return
	}
	live := jobstore.LiveOutput{Tail: preview(sources), StdoutBytes: sizes[0], StderrBytes: sizes[1]}
	if err := s.store.PublishLive(ctx, s.job.ID, live); err == nil {
		s.livePublished, s.liveSizes = now, sizes
	}
}

// elsewhere is the error of reading the live output of another host's
// running job here.
func elsewhere(rec *jobstore.Record) error {
	return fmt.Errorf("job %s runs on host %s (host id %s): its live output is readable there only; "+
		"here once it settles (bgcmd wait %s); bgcmd status %s shows its tail: %w",
		rec.ID, rec.Host, rec.HostID, rec.ID, rec.ID, ErrElsewhere)
}

// ErrElsewhere is wrapped by the error of reading a running job's live
// output on another host than its own.
var ErrElsewhere = errors.New("live output is on another host")

// watchKillNotices watches the store's notices of a kill request for the
// supervisor's job: on PostgreSQL a request made on any host wakes it at
// once, whatever filesystem the hosts share; on SQLite the channel is nil
// (the wake socket serves). The row is the truth: the poll reads it too.
func (s *supervisor) watchKillNotices() (<-chan struct{}, func()) {
	return s.store.WatchKill(s.job.ID)
}
