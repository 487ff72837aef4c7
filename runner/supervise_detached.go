//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/stackroom"
)

// spareAgain is the line a detached supervisor writes on its hand-over
// socket once the job its host asked it back from (spec.Return) has
// settled, every process of it reaped: it waits for another job there, as
// a spare, its store open and its statements prepared.
const spareAgain = "spare"

// Supervise is the body of a detached supervisor: it reads its spec from
// file descriptor 3, claims the job, runs the child under the shared
// supervise loop in the open directory that travels with the spec, reports
// startup on descriptor 4 (after the hello line, written first of all) and
// settles the job. Before anything else it marks every descriptor from 3
// up close-on-exec, so the child gets none of them.
//
// When the host asked for it back (spec.Return), it then says spareAgain
// on the socket and serves the next job the host hands it the same way,
// that job's report going to the pipe that comes with its spec. It does so
// only once its job has settled and no process of it is left; it exits
// when the host closes the socket instead.
func Supervise(ctx context.Context) error {
	// The hello comes first: it tells the host this binary is a supervisor.
	if _, err := unix.FcntlInt(4, unix.F_GETFD, 0); err == nil {
		_, _ = unix.Write(4, []byte(supervisorHello+"\n"))
	}
	statusF := os.NewFile(4, "status")
	if _, err := unix.FcntlInt(3, unix.F_GETFD, 0); err != nil || statusF == nil {
		return errors.New("no hand-over socket: this command is started by bgcmd itself")
	}
	ds := &detachedSupervisor{lr: &lineReader{fd: 3}, self: os.Getpid()}
	defer ds.lr.close()
	// The store, which its host sends at once.
	if err := ds.lr.next(&ds.om); err != nil {
		fmt.Fprintln(statusF, "error: supervisor ended without a report")
		statusF.Close()
		return handoffEnded(err)
	}
	if err := jobstore.CanOpen(ds.om.DB); err != nil {
		// Before it takes any job: its host may run it elsewhere.
		fmt.Fprintln(statusF, "error: "+err.Error())
		statusF.Close()
		return err
	}
	if !ds.om.JobFollows && !ds.om.WritesRow {
		ds.open(ctx) // a spare: it waits for its job with the store open
	}
	defer ds.closeStore()
	go warmStarts() // while the job is on its way
	if err := closeInheritedOnExec(); err != nil {
		return fmt.Errorf("mark inherited descriptors close-on-exec: %w", err)
	}
	ds.contain = ContainSubreaper
	if becomeSubreaper() != nil {
		ds.contain = ContainProcessGroup
	}
	catchSignals(make(chan os.Signal, 1), syscall.SIGHUP, syscall.SIGPIPE, syscall.SIGINT)
	ds.selfStart = processStart(ds.self)
	for {
		again, err := ds.serve(ctx, statusF)
		if err != nil || !again {
			return err
		}
		statusF = nil // the next job's comes with its spec
		if !ds.offer() {
			return nil
		}
	}
}

// detachedSupervisor is the state a detached supervisor process keeps from
// one job to the next: its hand-over, its store and who it is.
type detachedSupervisor struct {
	lr      *lineReader
	om      openMsg
	contain Containment
	// self and selfStart are this process, as job rows name it.
	self      int
	selfStart int64

	// The store opens in the background (open, begun once: beginOpen);
	// openStore waits for it, once (openOnce: a job whose row this
	// supervisor writes waits from another goroutine). opening is nil
	// until the open has begun.
	beginOpen sync.Once
	opening   chan error
	st        *jobstore.Store
	openErr   error
	opened    bool
	openOnce  sync.Once
	// logRestarts says the checkpoint a job with spec.ReadyLog takes
	// right before its settle (jobstore.Store.ReadyLog, through
	// supervisor.beforeSettle) copied the whole log, so that the settle
	// started it again.
	logRestarts bool
	// took says a job was taken: the store is closed at the end, after
	// waiting for it to open (a spare that never got one exits at once).
	took bool
}

// open begins to open the store in the background, once; the supervisor
// goes on meanwhile. A spare begins at once and waits for its job with the
// store open. A supervisor whose job follows at once (openMsg.JobFollows)
// begins when it first needs the store (openStore): for a job without a
// row, once its host has written it, so that the host's write, which the
// host's caller waits for, does not share the CPU with this open; for a
// job with a row, at once, to claim it. Once open, the settle's statements
// are prepared while the job runs, so the settle's transaction, which
// every other writer of the store waits for, only runs them; a failure
// there is the settle's to report.
//
// A supervisor that writes its job's row (openMsg.WritesRow) begins once
// its job is announced and reported running (createAfter), so that
// neither this open nor the create is what its host's caller waits for,
// and the open does not take the CPU from the host and the child's start
// meanwhile: a SQLite file at this build's schema (jobstore.SchemaCurrent,
// read again here) is opened as its host would have
// (jobstore.Options.Deferred: no migration, no check that finds nothing to
// do), and the open is done when the create's statements are compiled,
// which reads the schema; the create then only runs them.
func (ds *detachedSupervisor) open(ctx context.Context) {
	ds.beginOpen.Do(func() { ds.opening = make(chan error, 1); go ds.openNow(ctx) })
}

// openNow opens the store and says so on ds.opening (see open).
func (ds *detachedSupervisor) openNow(ctx context.Context) {
	stackroom.Grow() // before SQLite's frames are on it
	current := ds.om.WritesRow && ds.om.DB == "" && jobstore.SchemaCurrent(ds.om.DBPath)
	st, err := jobstore.Open(ctx, jobstore.Options{Path: ds.om.DBPath, DSN: ds.om.DB,
		Host: ds.om.Host, HostID: ds.om.HostID, ShareArtifacts: ds.om.ShareArtifacts,
		OneConnection: true, // one job at a time: a second connection would parse the schema again
		Deferred:      current})
	if err == nil && current {
		if err = st.Prepare(ctx, jobstore.CreateWrites); err != nil {
			st.Close()
			st, err = nil, fmt.Errorf("open store %s: read its schema: %w", ds.om.DBPath, err)
		}
	}
	ds.st = st
	ds.opening <- err
	if err == nil && !ds.om.WritesRow {
		_ = st.Prepare(ctx, jobstore.SettleWrites)
	}
}

// openStore opens the store, if that has not begun, waits for it to be
// open and says whether it is. Any goroutine may call it.
func (ds *detachedSupervisor) openStore(ctx context.Context) error {
	ds.open(ctx)
	ds.openOnce.Do(func() { ds.openErr, ds.opened = <-ds.opening, true })
	return ds.openErr
}

// closeStore closes the store once a job was taken; a supervisor that
// never got one exits without waiting for it to open, as a crash would
// leave it, and one that never began to open it has nothing to close.
//
// What keeps a SQLite store's write-ahead log short when short processes
// share it: a process that opens the store after every connection ended
// rebuilds the log's index from its frames and counts none as copied, so
// the log starts again only at a write made after a checkpoint in the same
// process's life. Left to the end of every process, as the CLI leaves its
// connections, runs one at a time grew the log by every run (15 MB after
// 100, measured) and every open read all of it. So one process of each run
// sees to it, the supervisor, nearly always the last of its run, in one of
// two ways (TestRunsOneAtATimeKeepTheLogBounded):
//
//   - spec.ReadyLog (a `bgcmd run`, which waits for nothing): its checkpoint,
//     taken right before its settle, copied the log, and the settle, the
//     next write, started the log again. It ends with the store open, and the
//     next process appends to the settle's few pages instead of starting
//     an emptied log, which fsyncs the log and its directory before that
//     process's first commit (TestARunAppendsToTheLogItsLastSupervisorLeft).
//     A checkpoint that could not copy all of it (a reader needed the log)
//     or a log file grown past walSizeLimit leaves the log to the close.
//   - otherwise it closes the store: the last connection to close copies
//     the log into the database and empties it.
func (ds *detachedSupervisor) closeStore() {
	if !ds.took || ds.opening == nil || ds.openStore(context.Background()) != nil {
		return
	}
	if ds.logRestarts && jobstore.LogWithin(ds.st) {
		return
	}
	ds.st.Close()
}

// offer tells the host that this supervisor is free for another job: its
// stdout and stderr leave the settled job's log for /dev/null (a spare's),
// then spareAgain goes on the hand-over socket. False means the host is
// gone or let it go.
func (ds *detachedSupervisor) offer() bool {
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		outputTo(null)
	}
	_, err := unix.Write(3, []byte(spareAgain+"\n"))
	return err == nil
}

// outputTo makes f this process's stdout and stderr, and closes f.
func outputTo(f *os.File) {
	_ = unix.Dup3(int(f.Fd()), 1, 0)
	_ = unix.Dup3(int(f.Fd()), 2, 0)
	f.Close()
}

// serve reads the next job from the hand-over and supervises it until it
// has settled. statusF is the report pipe (descriptor 4) for the first job;
// nil for a later one, whose pipe comes with its spec. again says the host
// asked for this supervisor back and it may serve another job: the job
// settled and no process of it is left.
func (ds *detachedSupervisor) serve(ctx context.Context, statusF *os.File) (again bool, err error) {
	report := func(msg string) {
		if statusF != nil {
			fmt.Fprintln(statusF, msg)
			statusF.Close()
			statusF = nil
		}
	}
	defer func() { report("error: supervisor ended without a report") }()
	var sp spec
	err = ds.lr.next(&sp)
	// The host's answer to a job without a row comes on the hand-over
	// socket: it stays open until then, and is closed once, unless the
	// host asked for this supervisor back (the next job comes that way).
	keep := err == nil && sp.Unrecorded && sp.Return
	closeHandoff := sync.OnceFunc(func() {
		if !keep {
			unix.Close(3)
		}
	})
	defer closeHandoff()
	if err != nil || !sp.Unrecorded {
		closeHandoff()
	}
	if err != nil {
		// No job comes (a spare whose host ended, or let it go): exit
		// now, the store's opening abandoned as a crash would leave it.
		report("error: read spec: " + err.Error())
		return false, handoffEnded(err)
	}
	cwdF, logf, jobStatus, err := ds.lr.take()
	switch {
	case err != nil:
	case jobStatus != nil && statusF != nil:
		jobStatus.Close()
		err = errors.New("hand-over with a second report pipe")
	case jobStatus != nil:
		statusF = jobStatus
		fmt.Fprintln(statusF, supervisorHello)
	case statusF == nil:
		err = errors.New("hand-over of a job without its report pipe")
	}
	if err != nil {
		if cwdF != nil {
			cwdF.Close()
			logf.Close()
		}
		report("error: " + err.Error())
		return false, err
	}
	defer cwdF.Close()
	// Say the job is taken before doing anything with it: a host whose
	// spare ends without this line hands the job to another supervisor.
	if _, err := fmt.Fprintln(statusF, handoffTaken); err != nil {
		logf.Close()
		return false, fmt.Errorf("report the job taken: %w", err)
	}
	ds.took = true
	outputTo(logf) // the job's supervisor.log
	if sp.DBPath != ds.om.DBPath {
		err := fmt.Errorf("the job's store %s is not the store opened (%s)", sp.DBPath, ds.om.DBPath)
		report("error: " + err.Error())
		return false, err
	}
	if len(sp.Hooks) > 0 {
		return false, ds.runHooks(ctx, &sp, report)
	}
	var job *bgcmd.Job
	if sp.Unrecorded || sp.SupervisorWrites {
		if sp.Job == nil || sp.HostPID != ds.self || sp.HostStart != ds.selfStart || sp.Job.ID != sp.JobID {
			err := errors.New("the hand-over names another supervisor or job")
			report("error: " + err.Error())
			return false, err
		}
		job = sp.Job.job()
	} else {
		if err := ds.openStore(ctx); err != nil {
			report("error: " + err.Error())
			return false, err
		}
		rec, err := ds.st.ClaimRecord(ctx, jobstore.ClaimParams{ID: sp.JobID, SupervisorPID: ds.self,
			SupervisorStart: ds.selfStart, BootID: bootID(),
			FromPID: sp.HostPID, FromStart: sp.HostStart})
		if err != nil {
			report("error: " + err.Error())
			return false, err
		}
		if rec.State == bgcmd.StateQueued {
			// Hold the job (its env and open cwd) until a dispatcher starts it.
			report("ok")
			var released bool
			if rec, released = awaitDispatch(ctx, ds.st, sp.JobID, nil); !released {
				os.RemoveAll(filepath.Join(sp.Home, "jobs", sp.JobID))
				return false, nil
			}
		}
		job = &rec.Job
	}
	var precheck func() error
	if !sp.Unrecorded && !sp.SupervisorWrites {
		q := &queuedCheck{policyFile: sp.PolicyFile, env: sp.Env, envChecked: sp.EnvChecked, cwd: cwdF,
			digests: exeDigests{path: filepath.Join(sp.Home, digestsFile), racy: racyWindow}}
		if sp.Checked != nil {
			q.checked = sp.Checked.job()
		}
		precheck = func() error { return q.check(job) }
	}
	sup := &supervisor{
		precheck:    precheck,
		hookRule:    sp.Hook,
		threadWaits: true, // one job: nothing else of this process waits in the poller
		arts:        &artifacts.Store{Dir: filepath.Join(sp.Home, "artifacts")},
		job:         job, dir: filepath.Join(sp.Home, "jobs", sp.JobID), env: sp.Env, now: time.Now,
		started: make(chan error, 1), kick: make(chan struct{}, 1), done: make(chan struct{}),
		cwd:         cwdF,
		containment: ds.contain,
		cgroupRoot:  sp.Cgroup,
		hookless:    sp.Unrecorded && sp.Hookless,
	}
	if sp.Unrecorded {
		sup.hostRecords = func() error {
			report(runningReport(sup.job))
			answer, answered := readAnswer(3)
			closeHandoff()
			switch {
			case answered && answer == ackRecorded:
				return nil
			case answered:
				return errors.New("the host could not record the job")
			}
			// The host ended without an answer: it may have died between
			// its write of the row and its answer. The row says which.
			if err := ds.openStore(ctx); err != nil {
				return fmt.Errorf("the host ended without an answer, and the store that would hold the job's row did not open: %w", err)
			}
			rec, err := ds.st.Get(ctx, sp.JobID)
			if err == nil && rec.State == bgcmd.StateRunning && rec.SupervisorPID == ds.self && rec.SupervisorStart == ds.selfStart {
				return nil
			}
			return errors.New("the host ended before it recorded the job")
		}
	}
	if sp.ReadyLog {
		// Right before the settle, so that no other process's write comes
		// between the checkpoint and the settle, which starts the log
		// again (a CLI of a run started meanwhile would otherwise pay for
		// that start). Best effort: a checkpoint that failed leaves the
		// log to the close.
		sup.beforeSettle = sync.OnceFunc(func() { ds.logRestarts, _ = ds.st.ReadyLog(ctx) })
	}
	if ds.opened && ds.openErr == nil {
		sup.store = ds.st
	} else {
		sup.storeReady = func() error {
			if err := ds.openStore(ctx); err != nil {
				return err
			}
			sup.store = ds.st
			return nil
		}
	}
	if sp.SupervisorWrites {
		sup.hookless = sp.Hookless
		sup.create = ds.createAfter(ctx, sup)
		if ds.om.DB == "" {
			// The record names this host, as the row will.
			sup.announceTo = ds.om.DBPath
			job.Host, job.HostID = ds.om.Host, ds.om.HostID
		}
	}
	go func() { stackroom.Grow(); sup.run() }()
	err = <-sup.started
	cwdF.Close()
	var nf notStarted
	if errors.As(err, &nf) {
		report("start_failed: " + nf.msg)
	} else if err != nil {
		report("error: " + err.Error())
	} else if sup.running != nil {
		report(runningReport(sup.running))
	} else {
		report("ok")
	}
	<-sup.done
	pendingHooks.Wait() // the job's on_settle hook, bounded by its timeout
	// What the hook left running when it ended (a descendant that left its
	// process group, which its timeout kills): this process is its
	// subreaper as it is the job's, and nothing of a job outlives its
	// supervisor.
	reapTree(&usageSum{})
	if sup.running != nil && sup.createErr != nil {
		// Reported running once announced, and its row not written: the
		// child was stopped, and the store's next reader writes the row
		// from the record this process leaves (see jobstore.Announce).
		return false, fmt.Errorf("job %s was reported running, and its row could not be written: %w", sp.JobID, sup.createErr)
	}
	// Another job only for a supervisor its host asked back, whose job is
	// on record as settled with nothing of it left running.
	return keep && sup.settled != nil && noChildren(), nil
}
