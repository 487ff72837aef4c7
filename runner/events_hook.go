package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// pendingHooks counts the on_settle hooks running in this process: a
// detached supervisor waits for its job's hook before it exits, and
// Runner.Close for the hooks its supervisors and reconcile started.
var pendingHooks = newHookCount()

// hookCount is a counter one may wait on to reach zero. Unlike a
// sync.WaitGroup it may be added to while someone waits: runners of one
// process settle jobs while another closes.
type hookCount struct {
	mu   sync.Mutex
	n    int
	zero *sync.Cond
}

func newHookCount() *hookCount {
	c := &hookCount{}
	c.zero = sync.NewCond(&c.mu)
	return c
}

// Add adds delta (1 to start, -1 via Done to end).
func (c *hookCount) Add(delta int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += delta
	if c.n <= 0 {
		c.n = 0
		c.zero.Broadcast()
	}
}

// Done ends one hook.
func (c *hookCount) Done() { c.Add(-1) }

// Wait returns once no hook runs.
func (c *hookCount) Wait() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.n > 0 {
		c.zero.Wait()
	}
}

// hookKillWait bounds how long a hook's process group may outlive the kill
// at its timeout before bgcmd stops waiting for its descriptors.
const hookKillWait = time.Second

// storesSettleHooks says whether afterCreate stores an on_settle hook with
// each job this runner creates: whether its policy names one.
func (r *Runner) storesSettleHooks() bool {
	return r.policy != nil && len(r.policy.OnSettle) > 0
}

// afterCreate makes a new job known: it stores the policy's on_settle hook
// with the job (so whichever process settles it knows the hook) and wakes
// the event feed's watchers. A hook that cannot be stored fails the start:
// the job is settled as start_failed before anything runs. hooked says
// whether a hook was stored: a job created without one never has one.
func (r *Runner) afterCreate(ctx context.Context, job *bgcmd.Job) (hooked bool, err error) {
	defer notifyEvents(r.store)
	if !r.storesSettleHooks() {
		return false, nil
	}
	err = r.store.AddSettleHook(ctx, r.hookRule().row(job.ID))
	if err != nil {
		_, _ = r.store.Settle(context.WithoutCancel(ctx), jobstore.SettleParams{ID: job.ID,
			To: bgcmd.StateStartFailed, Error: err.Error()})
		os.RemoveAll(r.jobDir(job.ID))
		return false, err
	}
	return true, nil
}

// afterSettle runs once a job's terminal transition has committed, in the
// process that wrote it: it wakes the event feed's watchers at once, then
// starts the job's on_settle hook, if it has one and nobody has claimed it,
// in the background (pendingHooks counts it), under hr when not nil, if its
// row names rule's hook.
func afterSettle(st *jobstore.Store, arts *artifacts.Store, jobsDir, id string, hr *hookReaper, rule *hookRule) {
	notifyEvents(st)
	pendingHooks.Add(1)
	go func() {
		defer pendingHooks.Done()
		_ = runSettleHook(context.Background(), st, arts, jobsDir, id, hr, rule)
	}()
}

// runSettleHook claims the job's hook (compare-and-set: at most one process
// runs it) and runs it: argv only, never a shell; the status object JSON on
// stdin; BGCMD_JOB_ID, BGCMD_STATE, BGCMD_EXIT_CODE and PATH (the policy's
// search path) as its whole environment; its output discarded; bounded by
// its timeout, after which its process group is killed. Under hr (when
// not nil) its reaper also kills whatever it left running once it ends.
// The outcome is recorded in hook_runs; the job's state is never touched.
// A row that does not name rule's hook is recorded as not started and not
// run (see hookRule).
func runSettleHook(ctx context.Context, st *jobstore.Store, arts *artifacts.Store, jobsDir, id string, hr *hookReaper, rule *hookRule) error {
	host, _ := os.Hostname()
	hook, ok, err := st.ClaimSettleHook(ctx, id, host+":"+strconv.Itoa(os.Getpid()))
	if err != nil || !ok {
		return err
	}
	if why := rule.refuses(hook); why != "" {
		return st.FinishSettleHook(ctx, id, jobstore.HookStartFailed, nil, why)
	}
	view := &Runner{store: st, arts: arts, jobsDir: jobsDir, now: st.Now}
	rec, err := st.Get(ctx, id)
	if err != nil {
		return st.FinishSettleHook(ctx, id, jobstore.HookStartFailed, nil, err.Error())
	}
	status, err := view.status(ctx, rec, false)
	if err != nil {
		return st.FinishSettleHook(ctx, id, jobstore.HookStartFailed, nil, err.Error())
	}
	in, err := json.Marshal(status)
	if err != nil {
		return st.FinishSettleHook(ctx, id, jobstore.HookStartFailed, nil, err.Error())
	}
	exitCode := ""
	if rec.ExitCode != nil {
		exitCode = strconv.Itoa(*rec.ExitCode)
	}
	hctx, cancel := context.WithTimeout(ctx, hook.Timeout)
	defer cancel()
	cmd := exec.CommandContext(hctx, hook.Argv[0], hook.Argv[1:]...)
	cmd.Args = hook.Argv
	cmd.Env = []string{"PATH=" + hook.SearchPath, "BGCMD_JOB_ID=" + id,
		"BGCMD_STATE=" + string(rec.State), "BGCMD_EXIT_CODE=" + exitCode}
	cmd.Dir = "/"
	cmd.Stdin = bytes.NewReader(in)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = hookKillWait
	// Without privilege gain, as a job, whichever way it starts (a reaper
	// starts every program so; here, the same in every process that may
	// run it, whose threads that started a job have the flag and the
	// others not): none of the hook's processes becomes a user that could
	// not be killed.
	if hr != nil {
		err = hr.run(hctx, cmd, in)
	} else {
		if err = startUnprivileged(cmd, false); err == nil {
			err = cmd.Wait()
		}
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the hook left in its group
		}
	}
	var exitErr interface{ ExitCode() int } // *exec.ExitError, *hookExit
	switch {
	case err == nil:
		code := 0
		return st.FinishSettleHook(ctx, id, jobstore.HookOK, &code, "")
	case hctx.Err() != nil && ctx.Err() == nil:
		return st.FinishSettleHook(ctx, id, jobstore.HookTimeout, nil,
			fmt.Sprintf("on_settle hook %s did not finish within %s; its process group was killed", hook.Argv[0], hook.Timeout))
	case errors.As(err, &exitErr):
		code := exitErr.ExitCode()
		return st.FinishSettleHook(ctx, id, jobstore.HookFailed, &code,
			fmt.Sprintf("on_settle hook %s failed: %v", hook.Argv[0], err))
	default:
		return st.FinishSettleHook(ctx, id, jobstore.HookStartFailed, nil,
			fmt.Sprintf("on_settle hook %s could not start: %v (check the policy's on_settle)", hook.Argv[0], err))
	}
}

// runUnclaimedHooks runs the hooks of this host's settled jobs that nobody
// claimed because the process that settled the job (the row's supervisor:
// the detached supervisor, the in-process host, or the reconciler) died
// first. A settler still alive claims its own hook. Reconcile calls it.
func (r *Runner) runUnclaimedHooks(ctx context.Context) error {
	ids, err := r.store.UnclaimedSettleHooks(ctx)
	if err != nil {
		return err
	}
	orphans := ids[:0]
	for _, id := range ids {
		rec, err := r.store.Get(ctx, id)
		if err != nil || r.supervisorAlive(rec) {
			continue // pruned meanwhile, or its settler will run it
		}
		orphans = append(orphans, id)
	}
	r.startHooks(ctx, orphans)
	return nil
}
