package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/atomicfile"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// PruneReport is what Prune did: the store's result plus the files removed.
type PruneReport struct {
	jobstore.PruneResult
	// RemovedFiles counts the artifact files and indexes removed.
	RemovedFiles int `json:"removed_files"`
	// RemovedStored counts the outputs removed from the store itself (kept
	// there for other hosts; see jobstore.Options.ShareArtifacts).
	RemovedStored int `json:"removed_stored"`
}

// Prune deletes the settled jobs p selects (see jobstore.PruneParams:
// running jobs never, unread ones only when asked) and then the artifact
// files no remaining row references, plus any directory a pruned job left
// under jobs/. Rows go first, in transactions, files after: a crash in
// between leaves stray files for GC, never a row pointing at a missing
// file. The files a batch leaves unreferenced are removed while the next
// batches' rows are deleted. With p.DryRun nothing is deleted and the
// report says what would go. When a batch fails, the jobs already deleted
// are reported and their files removed, and the error is returned with the
// report.
func (r *Runner) Prune(ctx context.Context, p jobstore.PruneParams) (*PruneReport, error) {
	if p.DryRun {
		res, err := r.store.Prune(ctx, p)
		if res == nil {
			return nil, err
		}
		return &PruneReport{PruneResult: *res}, err
	}
	rm := r.startRemover(ctx)
	res, err := r.store.PruneEach(ctx, p, rm.add)
	rerr := rm.finish()
	if res == nil {
		return nil, errors.Join(err, rerr)
	}
	rep := &PruneReport{PruneResult: *res, RemovedFiles: rm.removed}
	if rm.gone != nil {
		rep.Unreferenced = rm.gone // else the store's empty list, never null
	}
	for _, u := range rm.gone {
		rep.FreedBytes += u.Bytes
	}
	// The same rule for output kept in the store for other hosts: the
	// statement itself spares what a row names again.
	shas := make([]string, len(rm.gone))
	for i, u := range rm.gone {
		shas[i] = u.SHA256
	}
	stored, derr := r.store.DeleteUnreferencedBlobs(ctx, shas)
	rep.RemovedStored = stored
	return rep, errors.Join(err, rerr, derr, r.removeJobDirs(res.Jobs), removeWakeSockets(wakeDirOf(r.store), r.store.HostID(), res.Jobs))
}

// remover removes the artifact files of pruned batches that no row names,
// on its own goroutine, taking whatever batches have queued up at once.
type remover struct {
	r       *Runner
	ctx     context.Context
	mu      sync.Mutex
	pending []jobstore.UnreferencedArtifact
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	// removed counts the files removed; gone are the artifacts whose
	// files went; errs what failed.
	removed int
	gone    []jobstore.UnreferencedArtifact
	errs    []error
}

func (r *Runner) startRemover(ctx context.Context) *remover {
	rm := &remover{r: r, ctx: ctx, wake: make(chan struct{}, 1), stop: make(chan struct{}),
		done: make(chan struct{})}
	go rm.loop()
	return rm
}

// add queues the files one committed batch's rows named.
func (rm *remover) add(batch []jobstore.UnreferencedArtifact) {
	rm.mu.Lock()
	rm.pending = append(rm.pending, batch...)
	rm.mu.Unlock()
	select {
	case rm.wake <- struct{}{}:
	default:
	}
}

func (rm *remover) loop() {
	defer close(rm.done)
	for {
		stopping := false
		select {
		case <-rm.wake:
		case <-rm.stop:
			stopping = true
		}
		rm.mu.Lock()
		queued := rm.pending
		rm.pending = nil
		rm.mu.Unlock()
		if len(queued) > 0 {
			rm.remove(queued)
		}
		if stopping {
			return
		}
	}
}

// remove removes the files of queued that no row names, asking the store
// under the artifacts lock: a row that stays may name a file (two jobs
// printed the same), and a job may have banked one again since its rows
// went. An artifact queued by two batches is asked about once.
func (rm *remover) remove(queued []jobstore.UnreferencedArtifact) {
	unlock, err := rm.r.arts.Lock(true)
	if err != nil {
		rm.errs = append(rm.errs, err)
		return
	}
	defer unlock()
	seen := make(map[string]bool, len(queued))
	shas := make([]string, 0, len(queued))
	for _, u := range queued {
		if !seen[u.SHA256] {
			seen[u.SHA256] = true
			shas = append(shas, u.SHA256)
		}
	}
	named, err := rm.r.store.ReferencedArtifacts(rm.ctx, shas)
	if err != nil {
		rm.errs = append(rm.errs, err)
		return
	}
	gone := make([]string, 0, len(shas))
	for _, u := range queued {
		if seen[u.SHA256] && !named[u.SHA256] {
			seen[u.SHA256] = false // once
			gone = append(gone, u.SHA256)
			rm.gone = append(rm.gone, u)
		}
	}
	n, err := removeArtifacts(rm.r.arts, gone)
	rm.removed += n
	if err != nil {
		rm.errs = append(rm.errs, err)
	}
}

// finish removes what is still queued and returns what failed; removed
// and gone then say what went.
func (rm *remover) finish() error {
	close(rm.stop)
	<-rm.done
	return errors.Join(rm.errs...)
}

// removeWorkers is how many directories Prune removes files from at once:
// unlinking mostly waits on the filesystem.
const removeWorkers = 8

// removeArtifacts removes the artifact files and indexes of shas, returning
// how many files existed. The files are grouped by their directory (the
// first two hex digits of the name), each directory is opened once and its
// files unlinked relative to it, several directories at once. A file already
// gone is not an error.
func removeArtifacts(store *artifacts.Store, shas []string) (int, error) {
	byDir := map[string][]string{}
	var dirs []string
	for _, sha := range shas {
		if !artifacts.ValidSHA256(sha) {
			continue // names no file the store banked
		}
		if byDir[sha[:2]] == nil {
			dirs = append(dirs, sha[:2])
		}
		byDir[sha[:2]] = append(byDir[sha[:2]], sha)
	}
	var removed atomic.Int64
	errs := make([]error, len(dirs))
	inParallel(len(dirs), removeWorkers, func(i int) {
		n, err := unlinkIn(filepath.Join(store.Dir, dirs[i]), byDir[dirs[i]])
		removed.Add(int64(n))
		errs[i] = err
	})
	return int(removed.Load()), errors.Join(errs...)
}

// unlinkIn removes each artifact of shas, file and index, from dir (opened
// once, never through a symbolic link), returning how many files existed.
func unlinkIn(dir string, shas []string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("remove artifacts: open %s: %w", dir, err)
	}
	defer unix.Close(fd)
	n := 0
	var errs []error
	for _, sha := range shas {
		for _, name := range []string{sha, sha + artifacts.IndexSuffix} {
			switch err := unix.Unlinkat(fd, name, 0); {
			case err == nil:
				n++
			case !errors.Is(err, unix.ENOENT):
				errs = append(errs, fmt.Errorf("remove artifact %s: %w", filepath.Join(dir, name), err))
			}
		}
	}
	return n, errors.Join(errs...)
}

// removeJobDirs removes the directories pruned jobs left under jobs/: one
// read of jobs/ says which of them exist.
func (r *Runner) removeJobDirs(jobs []jobstore.PrunedJob) error {
	names, err := entryNames(r.jobsDir)
	if err != nil {
		return fmt.Errorf("remove job directories: %w", err)
	}
	there := make(map[string]bool, len(names))
	for _, name := range names {
		there[name] = true
	}
	var errs []error
	for _, j := range jobs {
		if there[j.ID] {
			errs = append(errs, os.RemoveAll(r.jobDir(j.ID)))
		}
	}
	return errors.Join(errs...)
}

// entryNames lists the names in dir, none when dir does not exist.
func entryNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// removeWakeSockets removes the wake sockets that keepers of pruned jobs
// left behind when they died (a keeper that ends removes its own), and
// those of this host's processes that died with in-process runners open
// (procWake): one read of the wake folder, which holds little more than
// the sockets of live processes, says which exist.
func removeWakeSockets(dir, hostID string, jobs []jobstore.PrunedJob) error {
	if dir == "" {
		return nil
	}
	names, err := entryNames(dir)
	if err != nil {
		return fmt.Errorf("remove wake sockets: %w", err)
	}
	if len(names) == 0 {
		return nil
	}
	pruned := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		pruned[j.ID] = true
	}
	var errs []error
	for _, name := range names {
		if pruned[name] || staleProcWake(name, hostID) {
			if err := removeExisting(filepath.Join(dir, name)); err != nil {
				errs = append(errs, fmt.Errorf("remove wake socket: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// DefaultGCMinAge is the minimum age the CLI's gc gives GCOptions.MinAge:
// longer than a supervisor may take between banking its output and
// recording it (it retries a busy database for two minutes).
const DefaultGCMinAge = 15 * time.Minute

// GCOptions configure GC.
type GCOptions struct {
	// MinAge spares every file and directory changed (status change time,
	// which a rename updates) less than MinAge ago: a supervisor may be
	// banking that file, or a start creating that directory, right now.
	// Zero spares nothing; use DefaultGCMinAge unless nothing else uses the
	// home.
	MinAge time.Duration
	// DryRun reports what would be removed without removing it.
	DryRun bool
	// ExportsOlderThan, when set, also removes the bundles command_export
	// wrote under <home>/exports more than ExportsOlderThan ago (by their
	// modification time). Zero keeps every bundle: one is evidence an
	// agent may have cited, and only its owner knows when it is done.
	ExportsOlderThan time.Duration
}

// GCItem is one file or directory GC removed (or, dry, would remove).
type GCItem struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	// Reason says why it is garbage.
	Reason string `json:"reason"`
}

// GCReport is what GC found.
type GCReport struct {
	// StrayFiles are files under artifacts/ no artifacts row references.
	StrayFiles []GCItem `json:"stray_files"`
	// JobDirs are directories under jobs/ of jobs that have settled or that
	// the store does not know.
	JobDirs []GCItem `json:"job_dirs"`
	// WakeSockets are sockets in the wake folder beside the database that
	// nothing will remove: of jobs that have settled or that the store
	// does not know, and of this host's processes that have ended (their
	// keepers died before removing them).
	WakeSockets []GCItem `json:"wake_sockets"`
	// TempFiles are temporary files in the home that a write of one of
	// its files (the executables' digest cache) left behind when it was
	// interrupted before its rename.
	TempFiles []GCItem `json:"temp_files"`
	// Exports are files under <home>/exports: the temporary files of
	// exports a crash interrupted, and, with ExportsOlderThan, the bundles
	// command_export wrote before it.
	Exports []GCItem `json:"exports"`
	// SkippedRecent counts garbage spared because it is younger than
	// MinAge.
	SkippedRecent int `json:"skipped_recent"`
	// FreedBytes is the total size of what was removed.
	FreedBytes int64 `json:"freed_bytes"`
	// StrayStored counts outputs kept in the store for other hosts that no
	// row references and that are older than MinAge, removed (not counted
	// in a dry run).
	StrayStored int  `json:"stray_stored"`
	DryRun      bool `json:"dry_run"`
}

// GC removes what the store no longer accounts for: artifact files (and
// indexes, and temporary files of an interrupted bank) that no artifacts
// row references, job directories of jobs that have settled or that the
// store does not know, the wake sockets of those jobs and of this host's
// ended processes, and the temporary files of interrupted writes in the
// home — what a crash between a delete and a file removal, or a
// supervisor dying mid-settle, leaves behind, and the temporary files of
// interrupted exports under <home>/exports (with o.ExportsOlderThan, the
// bundles command_export wrote before it too). Running jobs'
// directories and sockets and referenced files are never touched.
// Reconcile (which runner.New runs) first settles jobs whose supervisor
// died, banking their logs.
func (r *Runner) GC(ctx context.Context, o GCOptions) (*GCReport, error) {
	rep := &GCReport{DryRun: o.DryRun, StrayFiles: []GCItem{}, JobDirs: []GCItem{}, WakeSockets: []GCItem{}, TempFiles: []GCItem{},
		Exports: []GCItem{}}
	cutoff := r.now().Add(-o.MinAge)
	unlock, err := r.arts.Lock(true)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	defer unlock()
	files, err := r.strayFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	dirs, err := r.leftoverDirs(ctx)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	socks, err := r.staleWakeSockets(ctx)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	temps, err := r.tempFiles()
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	exports, err := r.exportFiles(o.ExportsOlderThan)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	var errs []error
	if !o.DryRun {
		n, err := r.store.DeleteStrayBlobs(ctx, cutoff)
		rep.StrayStored = n
		errs = append(errs, err)
	}
	rep.StrayFiles = rep.sweep(files, removeExisting, o, cutoff, &errs)
	rep.JobDirs = rep.sweep(dirs, os.RemoveAll, o, cutoff, &errs)
	rep.WakeSockets = rep.sweep(socks, removeExisting, o, cutoff, &errs)
	rep.TempFiles = rep.sweep(temps, removeExisting, o, cutoff, &errs)
	rep.Exports = rep.sweep(exports, removeExisting, o, cutoff, &errs)
	return rep, errors.Join(errs...)
}

// removeExisting removes the file at path; one already gone is no error.
func removeExisting(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// sweep removes items with remove (nothing in a dry run), sparing those
// changed after cutoff when o sets a MinAge, and returns those it removed
// (or would remove); the failures go to errs.
func (rep *GCReport) sweep(items []GCItem, remove func(string) error, o GCOptions, cutoff time.Time, errs *[]error) []GCItem {
	out := []GCItem{}
	for _, it := range items {
		if o.MinAge > 0 && changedAfter(it.Path, cutoff) {
			rep.SkippedRecent++
			continue
		}
		if !o.DryRun {
			if err := remove(it.Path); err != nil {
				*errs = append(*errs, fmt.Errorf("gc: %w", err))
				continue
			}
		}
		out = append(out, it)
		rep.FreedBytes += it.Bytes
	}
	return out
}

// strayFiles lists the files under the artifact store that no row
// references.
func (r *Runner) strayFiles(ctx context.Context) ([]GCItem, error) {
	type file struct {
		path  string
		sha   string
		bytes int64
	}
	var all []file
	seen := map[string]bool{}
	var shas []string
	err := filepath.WalkDir(r.arts.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == r.arts.Dir {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || path == filepath.Join(r.arts.Dir, artifacts.LockName) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile
			}
			return err
		}
		sha := strings.TrimSuffix(d.Name(), artifacts.IndexSuffix)
		all = append(all, file{path: path, sha: sha, bytes: fi.Size()})
		if !seen[sha] {
			seen[sha] = true
			shas = append(shas, sha)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", r.arts.Dir, err)
	}
	ref, err := r.store.ReferencedArtifacts(ctx, shas)
	if err != nil {
		return nil, err
	}
	var out []GCItem
	for _, f := range all {
		if ref[f.sha] && r.arts.Path(f.sha) == strings.TrimSuffix(f.path, artifacts.IndexSuffix) {
			continue
		}
		reason := "no artifacts row references it"
		if !bgcmd.ValidSHA256(f.sha) {
			reason = "not an artifact (left by an interrupted bank?)"
		}
		out = append(out, GCItem{Path: f.path, Bytes: f.bytes, Reason: reason})
	}
	return out, nil
}

// tempFiles lists the temporary files in the home that an interrupted
// write of the executables' digest cache left (atomicfile.IsTemp): the
// only file of the home written that way.
func (r *Runner) tempFiles() ([]GCItem, error) {
	entries, err := os.ReadDir(r.home)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", r.home, err)
	}
	var out []GCItem
	for _, e := range entries {
		if !e.Type().IsRegular() || !atomicfile.IsTemp(r.digests.path, e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, GCItem{Path: filepath.Join(r.home, e.Name()), Bytes: fi.Size(),
			Reason: "the temporary file of an interrupted write of " + r.digests.path})
	}
	return out, nil
}

// leftoverDirs lists the job directories whose job has settled or is
// unknown to the store.
func (r *Runner) leftoverDirs(ctx context.Context) ([]GCItem, error) {
	entries, err := os.ReadDir(r.jobsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", r.jobsDir, err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	// A job reported running before its row is written: a record of its
	// create is beside the store until then (see jobstore.Announce).
	announced, err := r.store.Announced()
	if err != nil {
		return nil, err
	}
	states, err := r.store.JobStates(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []GCItem
	for _, id := range ids {
		st, known := states[id]
		reason, ok := notRunning(st, known)
		if !ok || !known && slices.ContainsFunc(announced, func(j *bgcmd.Job) bool { return j.ID == id }) {
			continue // running: its supervisor owns the directory
		}
		dir := r.jobDir(id)
		out = append(out, GCItem{Path: dir, Bytes: dirSize(dir), Reason: reason})
	}
	return out, nil
}

// changedAfter reports whether path's modification or status change time is
// after t; a path that cannot be examined counts as recent (spared).
func changedAfter(path string, t time.Time) bool {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	ctime := time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	mtime := time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
	return ctime.After(t) || mtime.After(t)
}

// dirSize is the total size of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
