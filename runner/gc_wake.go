package runner

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/bgcmd/bgcmd"
)

// staleWakeSockets lists the wake sockets nothing will remove: those of
// jobs that have settled or that the store does not know (their keeper
// died before it could remove its own), and those of this host's
// processes that ended with runners open (procWake). A socket of a running
// or queued job, of a live process or of another host is left alone, and
// so is whatever in the folder is not a socket under a name bgcmd gives.
func (r *Runner) staleWakeSockets(ctx context.Context) ([]GCItem, error) {
	dir := wakeDirOf(r.store)
	if dir == "" {
		return nil, nil
	}
	names, err := entryNames(dir)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	var ids []string
	var out []GCItem
	for _, name := range names {
		switch {
		case !isSocket(filepath.Join(dir, name)):
		case wakeable(name):
			ids = append(ids, name)
		case staleProcWake(name, r.store.HostID()):
			_, pid, _, _ := procWakeOwner(name)
			out = append(out, GCItem{Path: filepath.Join(dir, name),
				Reason: fmt.Sprintf("process %d of this host has ended", pid)})
		}
	}
	sort.Strings(ids)
	states, err := r.store.JobStates(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		st, known := states[id]
		if reason, ok := notRunning(st, known); ok {
			out = append(out, GCItem{Path: filepath.Join(dir, id), Reason: reason})
		}
	}
	return out, nil
}

// notRunning says why what a job left is garbage: the job is not in the
// store, or has settled. ok is false for a job still running or queued,
// whose supervisor or holder owns it.
func notRunning(st bgcmd.State, known bool) (reason string, ok bool) {
	switch {
	case !known:
		return "no such job in the store", true
	case st.Settled():
		return "job " + string(st), true
	}
	return "", false
}

// isSocket reports whether path is a unix socket (not following a
// symlink).
func isSocket(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().Type() == fs.ModeSocket
}
