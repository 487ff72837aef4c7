package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bgcmd/bgcmd/internal/hostid"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/launch"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// app is what a command works with: the store, a runner with detached
// supervisors, and the resolved home, session and policy.
type app struct {
	home    string
	session string
	store   *jobstore.Store
	runner  *runner.Runner
	// policyPath is the policy file in force ("" when none was found).
	policyPath string
	// exiting says the process ends once the command returns (see close).
	exiting bool
}

// openApp opens the store under the home and a detached runner with the
// policy, reconciling orphaned jobs first unless skipReconcile is set (run
// skips it: a start needs no other job settled, and the commands that read
// jobs reconcile). A missing
// default policy file is not an error here: the runner then refuses every
// start, and run explains how to create one. A policy file that exists but
// does not load is an error naming the file, key and line.
func (g *globals) openApp(ctx context.Context, skipReconcile bool) (*app, error) {
	home, err := g.homeDir()
	if err != nil {
		return nil, err
	}
	pol, path, err := g.loadPolicy(home)
	if err != nil {
		return nil, err
	}
	a, err := g.open(ctx, home, pol, skipReconcile)
	if err != nil {
		return nil, err
	}
	a.policyPath = path
	return a, nil
}

// open opens the store under home and a detached runner with pol (nil
// refuses every start), reconciling first unless skipReconcile is set.
func (g *globals) open(ctx context.Context, home string, pol *policy.Policy, skipReconcile bool) (*app, error) {
	a := &app{home: home, session: g.sessionName()}
	opts := g.storeOptions(home, false)
	if err := jobstore.CanOpen(opts.DSN); err != nil {
		return nil, err // a lean build: bgcmd-full opens it (handOverIfLean)
	}
	id, err := hostid.Load(home)
	if err != nil {
		return nil, err
	}
	opts.Host, opts.HostID = id.Name, id.ID
	// A run that only starts a job leaves its row to the supervisor, and
	// opens the store only if something else needs it: when the file's
	// header says its schema is this build's, so that the open checks
	// nothing of it.
	opts.Deferred = g.startOnly && opts.DSN == "" && jobstore.SchemaCurrent(opts.Path)
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the bgcmd binary for detached supervisors: %w", err)
	}
	var pre *runner.Prestarted
	if g.prestart && pol != nil {
		// The job's supervisor starts, and opens the store, while this
		// process opens it and writes the job's row. If it cannot be
		// started here, Start starts one and says why it could not.
		pre, _ = runner.Prestart(bin, opts)
	}
	launch.DiscardEarly() // started for a run that will start nothing
	if a.store, err = jobstore.Open(ctx, opts); err != nil {
		pre.Close()
		return nil, err
	}
	// A command that starts nothing still settles jobs (reconcile, kill, a
	// dispatch) and so runs their hooks: only the policy's own, loaded when
	// one is due. A policy that does not load runs none (each says why).
	hookPolicy := func() *policy.Policy {
		p, _, _ := g.loadPolicy(home)
		return p
	}
	a.runner, err = runner.New(ctx, runner.Options{Store: a.store, Home: home, Policy: pol, HookPolicy: hookPolicy,
		Detached: true, Binary: bin, Session: a.session, SkipReconcile: skipReconcile, Spare: g.longLived,
		Transient: g.transient, Prestarted: pre, SupervisorWrites: opts.Deferred})
	if err != nil {
		a.store.Close()
		return nil, err
	}
	return a, nil
}

// close releases the app; detached supervisors keep running. A command
// that set exiting leaves the store's connections to the end of the
// process: every write has committed, and the kernel releases the files
// and locks at once, where closing them first (finalising statements,
// unmapping the log's index) is work the user waits for.
func (a *app) close() {
	_ = a.runner.Close(context.Background()) // detached: nothing in-process to wait for
	if !a.exiting {
		a.store.Close()
	}
}

// loadPolicy finds the policy: --policy, else $BGCMD_POLICY, else
// <home>/policy.toml. An explicitly named file must exist; the default one
// may be absent (nil policy, every start refused).
func (g *globals) loadPolicy(home string) (*policy.Policy, string, error) {
	path, explicit := g.policy, true
	if path == "" {
		path = os.Getenv("BGCMD_POLICY")
	}
	if path == "" {
		path, explicit = filepath.Join(home, "policy.toml"), false
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && !explicit {
		return nil, "", nil
	}
	p, err := policy.Load(path)
	if err != nil {
		return nil, "", err
	}
	return p, path, nil
}

// noPolicyHelp tells a user how to create the policy the CLI looks for.
func noPolicyHelp(home string) string {
	return fmt.Sprintf(`no policy set: every start is refused until one exists.
Create %s (or pass --policy FILE, or set BGCMD_POLICY), for example:

  allowed_executables = ["/usr/bin/make", "/usr/bin/go"]
  cwd_root = "/path/to/checkout"
  default_timeout = "2m"
  kill_grace = "5s"
  max_output_bytes = 10485760`, filepath.Join(home, "policy.toml"))
}
