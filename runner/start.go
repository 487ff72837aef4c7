package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/policy"
)

// StartOptions are the per-start choices of a caller. Zero values take the
// policy's defaults; values above the policy's ceilings are refused.
type StartOptions struct {
	// Cwd is the working directory; "" means the policy's root, and a
	// relative path resolves against it.
	Cwd string
	// Env nil inherits this process's environment; a non-nil map replaces
	// it: the child gets exactly these variables.
	Env map[string]string
	// InheritedEnv says Env was built from this process's own environment,
	// the caller's variables on top: a variable equal to this process's
	// own passes the policy as inherited (see policy.Request.InheritedEnv).
	// Never for an environment an agent gave.
	InheritedEnv bool
	// Timeout bounds the command (SIGTERM, then SIGKILL after the grace).
	Timeout time.Duration
	// MaxOutputBytes caps each stream exactly.
	MaxOutputBytes int64
	// MaxMemory (bytes) and MaxProcesses limit the job's own cgroup
	// (memory.max, pids.max); 0 takes the policy's max_memory and
	// max_processes. A value above the policy's, or any value under a
	// policy without a cgroup, is refused (policy.CodeOverLimit).
	MaxMemory    int64
	MaxProcesses int
	// Session groups jobs for counters and history; default the runner's.
	Session string
	// Labels are free-form key/value tags stored with the job.
	Labels map[string]string
	// Group selects a policy group ([groups.NAME]); its max_running bounds
	// the job. An unknown group is refused (policy.CodeUnknownGroup).
	Group string
	// After lists jobs of the same session that must exit 0 before this
	// one starts; if one ends any other way this job settles
	// dependency_failed without starting.
	After []string
	// Priority orders the queue: a higher priority is dispatched first
	// (default 0), equal ones first in first out. It matters only to a
	// queued start.
	Priority int

	// rerunOf is the job Rerun reruns.
	rerunOf string
}

// Start checks argv against the policy and starts it under a supervisor. It
// returns as soon as the process is running and its row is durable, with the
// job in state running (or start_failed, with Error saying why, when the
// allowlisted executable could not be started). A start that a limit or a
// dependency concerns (policy max_running, o.Group, o.After) returns at
// once with the job queued, or already running when it was due.
//
// A policy refusal creates no job: it is recorded in the refusals table and
// returned as a *policy.Refusal. A failure to prepare the job's log
// directory or to launch a detached supervisor is returned as an error, and
// leaves no job running.
func (r *Runner) Start(ctx context.Context, argv []string, o StartOptions) (*bgcmd.Job, error) {
	session := o.Session
	if session == "" {
		session = r.session
	}
	dec, err := policy.Check(r.policy, policy.Request{Argv: argv, Cwd: o.Cwd, Env: o.Env, InheritedEnv: o.InheritedEnv,
		Timeout: o.Timeout, MaxOutputBytes: o.MaxOutputBytes, MaxMemory: o.MaxMemory, MaxProcesses: o.MaxProcesses})
	if err != nil {
		var ref *policy.Refusal
		if errors.As(err, &ref) {
			rerr := r.store.RecordRefusal(ctx, &bgcmd.Refusal{Session: session, Argv: argv,
				Cwd: o.Cwd, Code: string(ref.Code), Message: ref.Message})
			return nil, errors.Join(err, rerr)
		}
		return nil, err
	}
	// The child starts in dec.Dir; once Start returns it has started (or
	// failed to), so the handle is released here.
	defer dec.Close()
	job := &bgcmd.Job{
		Session: session, Argv: dec.Argv, Exe: dec.Exe, ExeSHA256: hashExecutable(dec.Exe, r.digests), Cwd: dec.Cwd,
		EnvReplaced: dec.EnvReplaced, EnvNames: dec.EnvNames,
		Timeout: dec.Timeout, KillGrace: dec.KillGrace, MaxOutputBytes: dec.MaxOutputBytes,
		Labels: o.Labels, SupervisorPID: r.selfPID, SupervisorStart: r.selfTime,
		BootID: r.boot, Detached: r.detached, RerunOf: o.rerunOf,
	}
	if dec.MaxMemory > 0 || dec.MaxProcesses > 0 {
		job.ResourceLimits = &bgcmd.ResourceLimits{MemoryMaxBytes: dec.MaxMemory, PidsMax: dec.MaxProcesses}
	}
	job.ID = jobstore.NewID()
	if lim, queued, err := r.queueing(ctx, session, argv, o); err != nil {
		return nil, err
	} else if queued {
		return r.enqueue(ctx, job, o, dec.Env, dec.EnvChecked, dec.Dir, lim)
	}
	dir := r.jobDir(job.ID)
	if err := makeJobDir(dir); err != nil {
		return nil, fmt.Errorf("start: create job directory %s: %w (check that the home is writable and has space)", dir, err)
	}
	if !r.detached {
		return r.startInProcess(ctx, job, dec.Env, dec.Dir)
	}
	// A detached supervisor starts now (or the spare is taken): it starts
	// the child as soon as it has the job, and the row is written then.
	// One that cannot be started fails the job with its row written, so
	// the attempt is on record.
	sup, supLog, err := r.prepareSupervisor(job.ID)
	if err != nil {
		if rerr := r.recordNotStarted(ctx, job, err.Error()); rerr != nil {
			return nil, fmt.Errorf("start: %w", rerr)
		}
		return r.readBack(ctx, job.ID, err)
	}
	return r.startDetached(ctx, job, sup, supLog, dec.Env, dec.Dir)
}

// createJob writes the job's row and what follows it (afterCreate, which
// says whether it stored a settle hook).
func (r *Runner) createJob(ctx context.Context, job *bgcmd.Job) (hooked bool, err error) {
	if err := r.store.Create(ctx, job); err != nil {
		return false, err
	}
	return r.afterCreate(ctx, job)
}

// readBack returns the job as its row reads after a start that did not
// report it running, with err, the start's error.
func (r *Runner) readBack(ctx context.Context, id string, err error) (*bgcmd.Job, error) {
	rec, gerr := r.store.Get(context.WithoutCancel(ctx), id)
	if gerr != nil {
		return nil, errors.Join(err, gerr)
	}
	return &rec.Job, err
}

// startInProcess runs the supervise loop in a goroutine, in the open
// directory cwd, and waits until the child has started (or failed to).
// The job's row is written only then, by the supervisor, with the child's
// pid and start time in it: one write for what took two (a row, then the
// child's start). When that write fails the child is stopped at once and
// the start fails with nothing on record, as a failed Create did before
// any child ran. The job as its row reads is returned: running, or
// start_failed with Error saying why.
func (r *Runner) startInProcess(ctx context.Context, job *bgcmd.Job, env []string, cwd *os.File) (*bgcmd.Job, error) {
	sup := r.newSupervisor(job, env)
	sup.cwd = cwd
	job.CreatedAt = r.now().UTC() // the start began now, before the child's
	sup.create = func() error {
		hooked, err := r.createJob(ctx, job)
		sup.hookless = !hooked
		return err
	}
	r.mu.Lock()
	r.live[job.ID] = sup
	r.mu.Unlock()
	r.wg.Add(1)
	r.workers.goRun(func() {
		defer r.wg.Done()
		sup.run()
		r.mu.Lock()
		delete(r.live, job.ID)
		r.mu.Unlock()
	})
	err := <-sup.started
	if err == nil && !sup.startSettled && sup.running != nil {
		j := *sup.running
		return &j, nil // running: no need to read back what was just written
	}
	if sup.createErr != nil {
		os.RemoveAll(sup.dir)
		if err == nil {
			err = sup.createErr
		}
		return nil, fmt.Errorf("start: %w", err)
	}
	return r.readBack(ctx, job.ID, err)
}
