package jobstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/flock"
)

// A job's create may be announced before its row is written: the
// supervisor of a `bgcmd run` reports the job running as soon as its
// child runs and a record of the row to be written is on disk, and writes
// the row just after, so that the store's open and the create are not
// what the caller waits for. The record is a file named by the job's id in
// the directory beside the database (AnnounceDir), written whole under a
// temporary name and renamed into place while its writer holds an
// exclusive flock(2) on it, which the writer keeps until the row is
// committed and the record removed. The lock is released by the kernel
// when the writer ends, however it ends.
//
// Every reader of the store sees such a job as if the row were there
// (landAnnounced): a store that opens, a Get that finds no row and a List
// first wait for each record whose writer still holds it, and write the
// row of one whose writer ended before it did (a supervisor killed in
// that window), as the writer would have; reconcile then settles that job
// as any job whose supervisor died. So a job id a caller was given is
// never unknown to a later command, and a job that ran is never missing
// from the store. Counters do not wait: a summary read on every agent
// tool's result, they count such a job once its row is there, a few
// milliseconds later, as they count any job started meanwhile.

// AnnounceDir is the directory of announced creates of the SQLite store at
// dbPath.
func AnnounceDir(dbPath string) string { return dbPath + "-creating" }

// announcedCreate is a record of the row an announced create writes: the
// job as Create takes it, with the fields its JSON leaves out.
type announcedCreate struct {
	Job             *bgcmd.Job `json:"job"`
	TimeoutMS       int64      `json:"timeout_ms"`
	KillGraceMS     int64      `json:"kill_grace_ms"`
	PIDStart        int64      `json:"pid_start"`
	SupervisorStart int64      `json:"supervisor_start"`
	BootID          string     `json:"boot_id"`
}

// job returns the job the record holds.
func (a *announcedCreate) job() (*bgcmd.Job, error) {
	j := a.Job
	if j == nil || j.ID == "" || len(j.Argv) == 0 || j.StartedAt == nil {
		return nil, errors.New("the record holds no started job")
	}
	j.Timeout, j.KillGrace = time.Duration(a.TimeoutMS)*time.Millisecond, time.Duration(a.KillGraceMS)*time.Millisecond
	j.PIDStart, j.SupervisorStart, j.BootID = a.PIDStart, a.SupervisorStart, a.BootID
	return j, nil
}

// ownAnnounced holds the paths of the records this process announced and
// has not landed: a reader of its own store does not wait for them (it
// would wait for itself).
var ownAnnounced sync.Map

// Announcement is the record of a create announced ahead of its row
// (Announce), held locked by this process until Done.
type Announcement struct {
	f    *os.File
	path string
}

// Announce records, beside the SQLite store at dbPath, the row that
// Create will write for j, a running job whose child has started (PID,
// PIDStart and StartedAt set), so that the job may be reported running
// before its row is written. The record is whole once Announce returns,
// and locked by this process until Done: Done once the row is committed,
// or never (the process ends) when it could not be, in which case the
// store's next reader writes it. The record holds no environment value:
// a job has only its variables' names.
func Announce(dbPath string, j *bgcmd.Job) (*Announcement, error) {
	if j.ID == "" || len(j.Argv) == 0 || j.StartedAt == nil {
		return nil, errors.New("announce create: the job has no id, argv or start")
	}
	b, err := json.Marshal(&announcedCreate{Job: j, TimeoutMS: j.Timeout.Milliseconds(),
		KillGraceMS: j.KillGrace.Milliseconds(), PIDStart: j.PIDStart,
		SupervisorStart: j.SupervisorStart, BootID: j.BootID})
	if err != nil {
		return nil, fmt.Errorf("announce create of job %s: %w", j.ID, err)
	}
	dir := AnnounceDir(dbPath)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("announce create of job %s: %w (check that the store's directory is writable)", j.ID, err)
	}
	final := filepath.Join(dir, j.ID)
	tmp := filepath.Join(dir, "."+j.ID)
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("announce create of job %s: %w", j.ID, err)
	}
	fail := func(err error) (*Announcement, error) {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("announce create of job %s: %w", j.ID, err)
	}
	if err := flock.Fd(f, unix.LOCK_EX); err != nil {
		return fail(err)
	}
	if _, err := f.Write(b); err != nil {
		return fail(err)
	}
	// Only a whole record, locked, appears under the job's id.
	if err := os.Rename(tmp, final); err != nil {
		return fail(err)
	}
	ownAnnounced.Store(final, true)
	return &Announcement{f: f, path: final}, nil
}

// Done removes the record, once the row it announced is committed, and
// releases it. It is safe to call more than once.
func (a *Announcement) Done() {
	if a == nil || a.f == nil {
		return
	}
	os.Remove(a.path)
	ownAnnounced.Delete(a.path)
	a.f.Close()
	a.f = nil
}

// announcePoll bounds the pause between two looks at a record whose writer
// still holds it: its row normally lands within milliseconds.
const announcePoll = 5 * time.Millisecond

// LandAnnounced is landAnnounced for every announced create: what a store
// did when it opened, for a caller that wants it again (reconcile, which
// ends the stopped writers first).
func (s *Store) LandAnnounced(ctx context.Context) error { return s.landAnnounced(ctx, "") }

// landAnnounced makes the store read as if the announced creates (of the
// job id only, or of every job when it is "") were rows: it waits for each
// record whose writer still holds it, up to the busy timeout, and writes
// the row of a record whose writer ended without removing it (unless the
// row is there: then it only removes the record). A writer that is
// stopped (a signal or a tracer stopped it: its own job can) is not
// waited for: reconcile ends it (see runner.Reconcile), and the next
// reader lands its record. A read-only store waits, and leaves what it
// cannot write to the next writer. On PostgreSQL there are none.
func (s *Store) landAnnounced(ctx context.Context, only string) error {
	if s.d.postgres || s.path == "" {
		return nil
	}
	dir := AnnounceDir(s.path)
	names := []string{only}
	if only != "" && !CanonicalID(only) {
		return nil
	}
	if only == "" {
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err == unix.ENOENT || err == nil && s.announced.emptyAt(st.Mtim) {
			return nil // none: no directory, or one seen empty since its last change
		} else if err != nil {
			return fmt.Errorf("read announced creates in %s: %w", dir, err)
		}
		var err error
		if names, err = announcedIDs(dir); err != nil {
			return err
		}
		if len(names) == 0 {
			s.announced.sawEmpty(st.Mtim)
		}
	}
	var errs []error
	for _, id := range names {
		if err := s.landOne(ctx, filepath.Join(dir, id)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// announcedIDs lists the ids of the records in dir, the announced
// creates: none when there is no such directory.
func announcedIDs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read announced creates in %s: %w", dir, err)
	}
	var ids []string
	for _, e := range entries {
		if CanonicalID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// Announced returns the jobs whose create is announced and not landed
// (their row may be written meanwhile), each as its record holds it: a
// reconciler judges their supervisors by them. None on PostgreSQL.
func (s *Store) Announced() ([]*bgcmd.Job, error) {
	if s.d.postgres || s.path == "" {
		return nil, nil
	}
	dir := AnnounceDir(s.path)
	ids, err := announcedIDs(dir)
	if err != nil {
		return nil, err
	}
	var jobs []*bgcmd.Job
	for _, id := range ids {
		f, rec, err := openAnnounced(filepath.Join(dir, id))
		if f == nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		f.Close()
		if j, err := rec.job(); err == nil {
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

// openAnnounced opens and reads the record at path. A record that is gone
// is not an error: both are nil then.
func openAnnounced(path string) (*os.File, *announcedCreate, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil // landed meanwhile, or never announced
		}
		return nil, nil, fmt.Errorf("read announced create %s: %w", path, err)
	}
	var rec announcedCreate
	if err := json.NewDecoder(f).Decode(&rec); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("read announced create %s: %w (a record a crash left damaged: its job has no row; move the file out of %s, then run bgcmd reconcile)", path, err, filepath.Dir(path))
	}
	return f, &rec, nil
}

// announceCache remembers the change time (mtime) of a store's directory
// of announced creates when it was last read empty, so that a reader
// stats the directory instead of reading it (a List costs a system call
// more, not three). A record added or removed changes the directory's
// mtime; but the kernel takes file times from a clock that ticks every few
// milliseconds, so an mtime that recent may be shared with a change made
// just after the read: it is not kept.
type announceCache struct {
	mu    sync.Mutex
	mtime unix.Timespec
	valid bool
}

// announceSettled is how old a directory's mtime must be, when the
// directory is read empty, for the read to be kept.
const announceSettled = 100 * time.Millisecond

func (c *announceCache) emptyAt(mtime unix.Timespec) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.valid && c.mtime == mtime
}

func (c *announceCache) sawEmpty(mtime unix.Timespec) {
	if time.Since(time.Unix(mtime.Unix())) < announceSettled {
		return
	}
	c.mu.Lock()
	c.mtime, c.valid = mtime, true
	c.mu.Unlock()
}

// landOne lands the record at path (see landAnnounced).
func (s *Store) landOne(ctx context.Context, path string) error {
	if _, own := ownAnnounced.Load(path); own {
		return nil
	}
	f, rec, err := openAnnounced(path)
	if f == nil {
		return err
	}
	defer f.Close()
	deadline := time.Now().Add(s.busyTimeout)
	for pause := 200 * time.Microsecond; ; pause = min(2*pause, announcePoll) {
		err := flock.Fd(f, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if err != unix.EWOULDBLOCK {
			return fmt.Errorf("lock announced create %s: %w", path, err)
		}
		if writerStopped(rec.Job, rec.SupervisorStart) || time.Now().After(deadline) {
			return nil // left to reconcile, or to a later reader
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
	// The writer has let go: it removed the record once its row was
	// committed, or it ended before.
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Nlink == 0 || s.readOnly {
		return nil
	}
	j, err := rec.job()
	if err != nil {
		return fmt.Errorf("read announced create %s: %w", path, err)
	}
	err = s.inTx(ctx, func(tx wtx) error {
		var n int
		if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM jobs WHERE id = ?`, j.ID); err != nil || n > 0 {
			return err
		}
		if err := s.readyToCreate(j, bgcmd.StateRunning); err != nil {
			return err
		}
		return insertJob(ctx, tx, j, QueueLimits{})
	})
	if err != nil {
		return fmt.Errorf("write the row of job %s, announced by its supervisor, which ended first: %w", j.ID, err)
	}
	os.Remove(path)
	return nil
}

// writerStopped says whether the process that announced j's create (its
// supervisor, started at start) is stopped, by a signal or a tracer: it
// holds the record until it runs again, and nothing but reconcile ends it.
func writerStopped(j *bgcmd.Job, start int64) bool {
	if j == nil || j.SupervisorPID <= 0 {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", j.SupervisorPID))
	i := strings.LastIndexByte(string(b), ')')
	if err != nil || i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), f[19] field 22 (start time).
	return len(f) > 19 && (f[0] == "T" || f[0] == "t") && (start == 0 || f[19] == fmt.Sprint(start))
}
