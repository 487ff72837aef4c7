package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/hostid"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/policy"
)

// Options configure a Runner. Zero values take the documented defaults.
type Options struct {
	// Home is the state directory: the database bgcmd.db, logs under
	// jobs/, artifacts under artifacts/ (required).
	Home string
	// Store is an already open store of Home's database, for bgcmd's own
	// packages (its type is internal: the store's writes are the runner's
	// alone). Hosts leave it nil; the runner then opens Home's database
	// and closes it in Close. Hosts read history through package jobstore.
	Store *jobstore.Store
	// Policy checks every start; nil refuses every start.
	Policy *policy.Policy
	// HookPolicy, when Policy is nil, gives the policy whose on_settle
	// hook is the only one this runner runs for the jobs it settles
	// (reconcile, kill, a queue's dispatch): a command that starts
	// nothing loads its policy only when a hook is due. nil (and a nil
	// policy) runs no hook but records why.
	HookPolicy func() *policy.Policy
	// Detached runs each supervisor as its own process (the bgcmd binary
	// re-executed with SuperviseCommand) so commands outlive the host.
	// False supervises in a goroutine of this process.
	//
	// Either way a job starts with exactly descriptors 0, 1 and 2. In
	// process, that is done by marking every descriptor of this process
	// from 3 up close-on-exec before each start: Go's own descriptors
	// already are, so this only changes descriptors the host inherited or
	// opened without O_CLOEXEC, which none of its own children will
	// inherit afterwards either.
	Detached bool
	// Binary is the executable re-executed for detached supervisors and for
	// the in-process mode's reapers; default os.Executable(). Its main must
	// call MaybeSupervise (bgcmd's does).
	//
	// Containment: every process a job starts, whatever it does with
	// sessions and process groups, is killed and reaped before the job's
	// terminal row is written. A detached supervisor is itself a child
	// subreaper. In the in-process mode the host never becomes one: each job
	// runs under a reaper process (Binary re-executed with ReapCommand) that
	// is the subreaper and reports the job's exit status and resource use.
	// Reapers are long-lived and serve one job at a time: the Runner starts
	// one when a job needs it and none is idle, reuses it for the next
	// jobs, replaces one that dies and stops them at Close. A program
	// that never called MaybeSupervise cannot be re-executed that way, so its
	// in-process jobs fall back to process-group containment (a descendant
	// that calls setsid escapes) and their events record containment
	// "process_group".
	Binary string
	// Spare keeps two detached supervisors started ahead of need, their
	// store already open, so that a Start in the detached mode pays
	// neither the start-up of a process nor the opening of the store: for
	// long-lived hosts (bgcmd mcp sets it). Two, so that a start soon after
	// another still finds one that has finished starting. A spare holds no
	// job and no environment until it is handed one; it exits when the
	// runner is closed or this process ends.
	//
	// Such a runner also asks each supervisor it hands a job back once the
	// job has settled and every process of it is gone (up to
	// maxReturning at a time): the supervisor then waits as a spare again,
	// store open and statements prepared, and the next job costs no
	// process start at all. Every supervisor that comes back is kept, up
	// to four waiting at once, so that calls following each other faster
	// than a job's supervisor comes back settle at the few supervisors
	// they need instead of starting one for every few jobs; those beyond
	// two exit once no start has taken one for a minute. A job gets
	// from a returned supervisor what it would from a new one: its own
	// environment, directory, descriptors 0 to 2 and nothing else.
	Spare bool
	// Transient says the host process ends soon after its detached starts
	// return and waits for none of its jobs (bgcmd run sets it, without
	// --wait). Each of its detached supervisors then leaves the store's
	// write-ahead log ready for the next process instead of emptied: it
	// checkpoints right before its settle, so that the settle starts the
	// log again, and ends with the store open (see jobstore.Store.ReadyLog).
	// The next short process to write, the next `bgcmd run`, then appends
	// to a short log instead of starting an empty one, which fsyncs the
	// log and its directory before its commit. Not for a long-lived host:
	// its own writes keep the log short (Spare is for those).
	Transient bool
	// SupervisorWrites, with Detached, leaves a detached start's row to
	// its supervisor, which opens the store anyway for the job's settle:
	// a process that starts one job and ends (bgcmd run) then need never
	// open its own store, whose open and schema are most of what such a
	// start costs it (see jobstore.Options.Deferred). On SQLite the
	// supervisor reports the job running once its create is announced
	// (jobstore.Announce), and writes the row after. Not with a policy
	// on_settle hook (its row is written by the host, with the job's) nor
	// with Spare (a long-lived host writes faster than a supervisor can
	// open the store).
	SupervisorWrites bool
	// Prestarted is a detached supervisor started by Prestart for this
	// runner's store: the first detached Start hands it its job, as it
	// would a spare. One started for another store is closed.
	Prestarted *Prestarted
	// Session is the default session of Start; default "default".
	Session string
	// Now is the clock; default the store's.
	Now func() time.Time
	// ShareArtifacts keeps banked output in the store too, so every host
	// sharing it reads it (see jobstore.Options.ShareArtifacts); only for a
	// store New opens (an open Store carries its own setting). Off by
	// default: one host needs only the files.
	ShareArtifacts bool
	// SkipReconcile leaves orphaned jobs alone in New (Reconcile can still
	// be called).
	SkipReconcile bool
	// DB, when Store is nil, is the PostgreSQL database New opens (a
	// postgres:// URL, see jobstore.Options.DSN); empty means the SQLite
	// file <Home>/bgcmd.db. Detached supervisors open the runner's store's
	// database whichever it is.
	DB string
}

// Runner starts and supervises jobs. It is safe for concurrent use.
type Runner struct {
	store    *jobstore.Store
	ownStore bool // opened by New, closed by Close
	home     string
	jobsDir  string
	arts     *artifacts.Store
	policy   *policy.Policy
	// hookPolicy is Options.HookPolicy, called once (hookRule).
	hookPolicy     func() *policy.Policy
	hookPolicyOnce sync.Once
	hookPolicyGot  *policy.Policy
	detached       bool
	binary         string
	session        string
	now            func() time.Time
	boot           string
	selfPID        int
	selfTime       int64
	// digests keeps executables' sha256 across this home's processes.
	digests exeDigests

	keepSpare     bool
	transient     bool
	spareMu       sync.Mutex
	spares        []*supProc // detached supervisors waiting for a job, oldest first
	spareStarting int        // spares being started
	closed        bool
	// spareSpawns counts spares being started, and the trim's letting go
	// of those beyond spareCount; Close waits for them. lastSpare is the
	// latest spare started (for tests).
	spareSpawns sync.WaitGroup
	lastSpare   *supProc
	// returnSlots counts the supervisors asked back (spec.Return) that
	// have not come back yet, returning holds those whose job is on
	// record, and returns counts their waiters (awaitReturn), which Close
	// ends.
	returnSlots int
	returning   map[*supProc]struct{}
	returns     sync.WaitGroup
	// lastTake is when a start last took a spare, and trim, when set,
	// lets go of those waiting beyond spareCount once they have been
	// idle long enough (trimSpares).
	lastTake time.Time
	trim     *time.Timer

	mu   sync.Mutex
	live map[string]*supervisor // in-process supervisors of this runner
	wg   sync.WaitGroup
	// reapers are the in-process jobs' reaper processes.
	reapers reaperPool
	// workers run the in-process jobs' goroutines.
	workers *workers
	// procWake is this process's wake socket for the in-process jobs
	// (nil: each binds its own), taken at the first (procWakeTaken).
	procWake      *procWake
	procWakeTaken bool
	// pendingCreate is set while a detached start of this runner holds a
	// create begun ahead (see startDetached): one at a time.
	pendingCreate atomic.Bool
	// supervisorWrites is Options.SupervisorWrites.
	supervisorWrites bool
	// killPoll and eventNet replace killPoll and eventSafetyNet when set
	// (tests that prove a notice arrives without them); pendingHold
	// replaces pendingHold (tests of a create begun ahead and let go).
	killPoll, eventNet, pendingHold time.Duration
}

// New makes a Runner over the home's store, opening (and creating) its
// database unless opts.Store is set. Unless opts.SkipReconcile is set it
// first reconciles this host's jobs whose supervisor died.
func New(ctx context.Context, opts Options) (*Runner, error) {
	defer opts.Prestarted.Close() // unless the runner took it
	if opts.Home == "" {
		return nil, errors.New("new runner: empty home directory")
	}
	home, err := filepath.Abs(opts.Home)
	if err != nil {
		return nil, fmt.Errorf("new runner: %w", err)
	}
	ownStore := opts.Store == nil
	if ownStore {
		id, err := hostid.Load(home)
		if err != nil {
			return nil, fmt.Errorf("new runner: %w", err)
		}
		if opts.Store, err = jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(home, "bgcmd.db"), DSN: opts.DB,
			Host: id.Name, HostID: id.ID, ShareArtifacts: opts.ShareArtifacts}); err != nil {
			return nil, fmt.Errorf("new runner: %w", err)
		}
	}
	r, err := newRunner(ctx, home, opts)
	if err != nil {
		if ownStore {
			opts.Store.Close()
		}
		return nil, err
	}
	r.ownStore = ownStore
	r.adoptPrestarted(opts.Prestarted)
	r.refillSpare()
	return r, nil
}

func newRunner(ctx context.Context, home string, opts Options) (*Runner, error) {
	var err error
	if opts.Session == "" {
		opts.Session = "default"
	}
	if opts.Now == nil {
		opts.Now = opts.Store.Now
	}
	if opts.Detached && opts.Binary == "" {
		if opts.Binary, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("new runner: find own executable for detached supervisors: %w", err)
		}
	}
	r := &Runner{
		store: opts.Store, home: home, jobsDir: filepath.Join(home, "jobs"),
		digests: exeDigests{path: filepath.Join(home, digestsFile), racy: racyWindow},
		arts:    &artifacts.Store{Dir: filepath.Join(home, "artifacts")},
		policy:  opts.Policy, detached: opts.Detached, binary: opts.Binary, hookPolicy: opts.HookPolicy,
		session: opts.Session, now: opts.Now, boot: bootID(), keepSpare: opts.Spare && opts.Detached,
		transient: opts.Transient, supervisorWrites: opts.SupervisorWrites && opts.Detached,
		selfPID: os.Getpid(), live: map[string]*supervisor{}, workers: newWorkers(),
	}
	r.selfTime = processStart(r.selfPID)
	for _, d := range []string{r.jobsDir, r.arts.Dir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("new runner: create %s: %w (check that the home is writable)", d, err)
		}
	}
	if !opts.SkipReconcile {
		if _, err := r.Reconcile(ctx); err != nil {
			return nil, fmt.Errorf("new runner: %w", err)
		}
	}
	return r, nil
}

// Home returns the runner's state directory.
func (r *Runner) Home() string { return r.home }

// Policy returns the policy every Start is checked against (nil refuses
// everything).
func (r *Runner) Policy() *policy.Policy { return r.policy }

// Close waits for the runner's in-process supervisors to finish, and for
// the on_settle hooks this process started (each bounded by its timeout),
// then stops the in-process jobs' reaper processes and closes the store it
// opened; or until ctx is done: then it returns an error wrapping
// ctx.Err() and the supervisors go on settling their jobs (each reaper
// stops once its job has ended; a store the runner opened stays open for
// them). Detached supervisors are independent processes and keep running;
// a spare supervisor exits.
func (r *Runner) Close(ctx context.Context) error {
	r.closeSpare()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		pendingHooks.Wait()
		close(done)
	}()
	select {
	case <-done:
		r.workers.close()
		r.releaseProcWake()
		err := r.reapers.close(ctx)
		if r.ownStore {
			err = errors.Join(err, r.store.Close())
		}
		return err
	case <-ctx.Done():
		_ = r.reapers.close(ctx) // the busy ones stop as their jobs end
		return fmt.Errorf("close runner: in-process jobs still running: %w", ctx.Err())
	}
}

func (r *Runner) jobDir(id string) string { return filepath.Join(r.jobsDir, id) }

func (r *Runner) liveSupervisor(id string) *supervisor {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[id]
}
