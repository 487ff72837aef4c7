//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bgcmd/bgcmd/artifacts"
)

// A job's on_settle hook runs in the process that settled the job. For a
// detached supervisor that is its own job's end; for a short-lived process
// that settles a job otherwise (a CLI command that reconciles a killed
// supervisor's job, a start that failed, a queued job cancelled) it would
// hold that command until the hook ends, up to its timeout. Such a process
// hands the hooks to a detached supervisor instead (spec.Hooks): it claims
// and runs them as it runs its own job's hook, the subreaper of all they
// start, sweeps what they left once they end, and exits. The command
// returns once the supervisor has taken them.

// handsOffHooks says whether this runner hands the hooks of the jobs its
// process settles to a detached supervisor: a detached runner that keeps
// no spares (a short-lived process, as every CLI command but mcp and ui).
// A long-lived host runs them itself, in the background.
func (r *Runner) handsOffHooks() bool { return r.detached && !r.keepSpare }

// afterSettle is afterSettle for a job this runner's process settled: the
// event feed's watchers woken, and the job's hook started, here or in a
// detached supervisor (handsOffHooks).
func (r *Runner) afterSettle(id string) {
	if !r.handsOffHooks() {
		afterSettle(r.store, r.arts, r.jobsDir, id, r.hookReaper(), r.hookRule())
		return
	}
	notifyEvents(r.store)
	ctx := context.Background()
	if h, err := r.store.SettleHookRun(ctx, id); err != nil || h.ClaimedAt != nil {
		return // none, or claimed already: nothing to run
	}
	r.startHooks(ctx, []string{id})
}

// startHooks starts the hooks of the settled jobs ids, each unless another
// process has claimed it: in a detached supervisor when this runner hands
// them off and one takes them, else here in the background (pendingHooks
// counts them; Close waits). A hand-off that fails (the binary is no
// bgcmd supervisor, say) runs them here.
func (r *Runner) startHooks(ctx context.Context, ids []string) {
	if len(ids) == 0 {
		return
	}
	if r.handsOffHooks() && r.handOffHooks(ctx, ids) == nil {
		return
	}
	hr, rule := r.hookReaper(), r.hookRule()
	for _, id := range ids {
		pendingHooks.Add(1)
		go func() {
			defer pendingHooks.Done()
			_ = runSettleHook(context.WithoutCancel(ctx), r.store, r.arts, r.jobsDir, id, hr, rule)
		}()
	}
}

// handOffHooks hands the hooks of the jobs ids to a new detached
// supervisor and waits until it has taken them. A supervisor that dies
// before it claims one leaves it unclaimed, for the next reconcile to run
// (runUnclaimedHooks).
func (r *Runner) handOffHooks(ctx context.Context, ids []string) error {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer devNull.Close()
	// The directory that travels with a spec: a hook starts in / anyway.
	root, err := os.Open("/")
	if err != nil {
		return err
	}
	defer root.Close()
	p, err := r.spawnSupervisorForJob(devNull)
	if err != nil {
		return fmt.Errorf("start a supervisor for them: %w", err)
	}
	sp := spec{Home: r.home, DBPath: r.store.Path(), Hooks: ids, Hook: r.hookRule()}
	p, rr, err := r.sendSpec(p, devNull, root, func(*supProc) *spec { return &sp }, nil)
	if p == nil {
		return err
	}
	p.conn.Close()
	defer rr.f.Close()
	if err != nil {
		return err
	}
	line, err := rr.report()
	if line != "ok" {
		if !rr.hello {
			return fmt.Errorf("the binary %s is not a bgcmd supervisor (%q, %v)", rr.exe, line, err)
		}
		return fmt.Errorf("the supervisor %s did not take them (%q, %v)", rr.exe, line, err)
	}
	return nil
}

// runHooks is a detached supervisor handed hooks (spec.Hooks) rather than
// a job: it says it has them, claims and runs each hook that nobody has
// claimed, waits for them all, kills and reaps what they left running (it
// is their subreaper), and ends.
func (ds *detachedSupervisor) runHooks(ctx context.Context, sp *spec, report func(string)) error {
	report("ok") // the host goes on: whatever happens next is on record
	if err := ds.openStore(ctx); err != nil {
		// The hooks stay unclaimed: the next reconcile runs them.
		return errors.Join(errors.New("run on_settle hooks: the store did not open"), err)
	}
	arts := &artifacts.Store{Dir: filepath.Join(sp.Home, "artifacts")}
	jobsDir := filepath.Join(sp.Home, "jobs")
	for _, id := range sp.Hooks {
		pendingHooks.Add(1)
		go func() {
			defer pendingHooks.Done()
			_ = runSettleHook(ctx, ds.st, arts, jobsDir, id, nil, sp.Hook)
		}()
	}
	pendingHooks.Wait()
	reapTree(&usageSum{})
	return nil
}
