package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// forever bounds a wait nobody bounded (about 146 years).
const forever = time.Duration(1 << 62)

// runFlags are run's options as typed.
type runFlags struct {
	cwd, timeout, maxOutput string
	maxMemory               string
	maxProcesses            int
	env, labels             []string
	replaceEnv, wait        bool
	group                   string
	after                   []string
	priority                int
}

func newRunCmd(g *globals) *cobra.Command {
	var o runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] -- ARGV...",
		Short: "Start a command in the background and print its job id",
		Long: `Start ARGV (an argv array, never a shell line) under the policy, supervised
by a detached process that outlives bgcmd, and print the job id at once
(the status object with --json).

Without --cwd the command runs in the current directory, which must be
inside the policy's cwd_root; a relative --cwd is taken from the current
directory. The child inherits bgcmd's environment; --env K=V adds or
overrides variables, and --replace-env gives it exactly the --env
variables and nothing else. Sizes take plain bytes or units (512KiB,
10MiB, 1G); durations take Go syntax (90s, 5m, 1h30m).

Without a policy every start is refused; the message says how to create
one. A refusal exits 3 with the reason and a hint on stderr.

With --wait, bgcmd waits for the job (a progress line on a terminal's
stderr) and exits with the command's own exit code.

` + exitCodesHelp + `

With --group NAME (a [groups.NAME] of the policy) or a policy max_running,
a start beyond the limit is queued (state queued) and starts when a slot
frees; with --after ID it starts only once that job has exited 0, and
settles dependency_failed without starting if it ended otherwise.

Without --wait, run exits 0 once the command runs or is queued, and 127
when it could not be started.`,
		Example: `  bgcmd run -- /usr/bin/make test
  bgcmd run --timeout 10m --max-output 50MiB --label pr=42 -- /usr/bin/go test ./...
  bgcmd run --max-memory 512MiB --max-processes 200 -- /usr/bin/make -j4
  bgcmd run --wait --replace-env --env PATH=/usr/bin -- /usr/bin/git status
  bgcmd run --group tests -- /usr/bin/go test ./...
  bgcmd run --after 0193c2f4 -- /usr/bin/golangci-lint run`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, argv []string) error { return g.run(cmd, argv, o) },
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // flags after ARGV[0] belong to the command
	f.StringVar(&o.cwd, "cwd", "", "working directory (default: the current directory)")
	f.StringVar(&o.timeout, "timeout", "", "bound the command (default: the policy's default_timeout)")
	f.StringVar(&o.maxOutput, "max-output", "", "cap each stream at this size (default: the policy's max_output_bytes)")
	f.StringVar(&o.maxMemory, "max-memory", "", "kill the job when its processes use more memory than this, e.g. 512MiB (its cgroup's memory.max; default: the policy's max_memory; needs the policy's cgroup)")
	f.IntVar(&o.maxProcesses, "max-processes", 0, "fail the job's forks beyond this many processes at once, threads included (its cgroup's pids.max; default: the policy's max_processes; needs the policy's cgroup)")
	f.StringArrayVar(&o.env, "env", nil, "set an environment variable K=V (repeatable)")
	f.BoolVar(&o.replaceEnv, "replace-env", false, "give the command exactly the --env variables, nothing inherited")
	f.StringArrayVar(&o.labels, "label", nil, "tag the job with K=V (repeatable)")
	f.BoolVar(&o.wait, "wait", false, "wait for the job and exit with its exit code")
	f.StringVar(&o.group, "group", "", "run in the policy group NAME ([groups.NAME]), queued while the group is full")
	f.StringArrayVar(&o.after, "after", nil, "start only once job ID has exited 0 (repeatable); queued until then")
	f.IntVar(&o.priority, "priority", 0, "queue order: a higher priority is dispatched first (equal ones in arrival order)")
	return cmd
}

// startOptions turns the typed flags into runner options.
func (o *runFlags) startOptions() (runner.StartOptions, error) {
	var so runner.StartOptions
	var err error
	if o.cwd == "" {
		if so.Cwd, err = os.Getwd(); err != nil {
			return so, fmt.Errorf("find the current directory: %w (pass --cwd)", err)
		}
	} else if so.Cwd, err = filepath.Abs(o.cwd); err != nil {
		return so, &usageError{fmt.Errorf("--cwd %q: %w", o.cwd, err)}
	}
	if o.timeout != "" {
		if so.Timeout, err = parseDuration("--timeout", o.timeout); err != nil {
			return so, err
		}
		if so.Timeout == 0 {
			return so, &usageError{fmt.Errorf("--timeout %q: must be positive", o.timeout)}
		}
	}
	if o.maxOutput != "" {
		if so.MaxOutputBytes, err = parseSize("--max-output", o.maxOutput); err != nil {
			return so, err
		}
	}
	if o.maxMemory != "" {
		if so.MaxMemory, err = parseSize("--max-memory", o.maxMemory); err != nil {
			return so, err
		}
	}
	if o.maxProcesses < 0 {
		return so, &usageError{fmt.Errorf("--max-processes %d: must be positive", o.maxProcesses)}
	}
	so.MaxProcesses = o.maxProcesses
	if len(o.env) > 0 || o.replaceEnv {
		so.Env = map[string]string{}
		so.InheritedEnv = !o.replaceEnv
		if !o.replaceEnv {
			for _, kv := range os.Environ() {
				if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
					so.Env[k] = v
				}
			}
		}
		for _, kv := range o.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return so, &usageError{fmt.Errorf("--env %q: want NAME=VALUE", kv)}
			}
			so.Env[k] = v
		}
	}
	for _, kv := range o.labels {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return so, &usageError{fmt.Errorf("--label %q: want KEY=VALUE", kv)}
		}
		if bgcmd.ReservedLabel(k) {
			return so, &usageError{fmt.Errorf("--label %q: the keys kind, tool and display are set by bgcmd's git tools alone: use another key", kv)}
		}
		if so.Labels == nil {
			so.Labels = map[string]string{}
		}
		so.Labels[k] = v
	}
	return so, nil
}

// recordBadPolicy records a start refused because the policy file does
// not load, as every refusal is recorded for audit. Failing to record it is
// not worth a second error: the refusal itself is what the user sees. But
// a lean bgcmd whose store needs bgcmd-full (a new home) returns that
// error, so that bgcmd-full refuses the run and records it.
func (g *globals) recordBadPolicy(ctx context.Context, argv []string, so runner.StartOptions, loadErr error) error {
	a, err := g.openJobs(ctx, true)
	if errors.Is(err, jobstore.ErrLeanBuild) {
		return err
	}
	if err != nil {
		return nil
	}
	defer a.close()
	_ = a.store.RecordRefusal(ctx, &bgcmd.Refusal{Session: a.session, Argv: argv, Cwd: so.Cwd,
		Code: string(policy.CodeBadPolicy), Message: "the policy file does not load: " + loadErr.Error()})
	return nil
}

func (g *globals) run(cmd *cobra.Command, argv []string, o runFlags) error {
	so, err := o.startOptions()
	if err != nil {
		return err
	}
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	g.prestart, g.transient = true, !o.wait
	// Without --wait or --json, run prints the job's id once it runs,
	// read from nothing but the start.
	g.startOnly = !o.wait && !g.json
	a, err := g.openApp(ctx, true)
	if err != nil {
		var le *policy.LoadError
		if errors.As(err, &le) {
			if err := g.recordBadPolicy(ctx, argv, so, err); err != nil {
				return err
			}
			return &exitError{code: exitRefused, msg: "refused: the policy file does not load: " + err.Error(),
				kind: string(policy.CodeBadPolicy), hint: "fix the policy file at the line named, then run again"}
		}
		return err
	}
	defer a.close()
	so.Group, so.Priority = o.group, o.priority
	for _, ref := range o.after {
		// A job that does not exist is the runner's refusal (bad_dependency).
		id, err := a.store.ResolveID(ctx, ref)
		if errors.Is(err, bgcmd.ErrNotFound) {
			id, err = ref, nil
		}
		if err != nil {
			_, err = a.resolve(ctx, ref)
			return err
		}
		so.After = append(so.After, id)
	}
	job, err := a.runner.Start(ctx, argv, so)
	if ref, ok := policy.IsRefusal(err); ok {
		if ref.Code == policy.CodeNoPolicy {
			return &exitError{code: exitRefused, msg: noPolicyHelp(a.home)}
		}
		msg := fmt.Sprintf("refused (%s): %s", ref.Code, ref.Message)
		if ref.Hint != "" {
			msg += "\nhint: " + ref.Hint
		}
		return &exitError{code: exitRefused, msg: msg, kind: string(ref.Code), hint: ref.Hint}
	}
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if !o.wait {
		a.exiting = true // bgcmd exits once the job id is out
		// Start returns once the child runs or the start has failed and
		// settled, with the job as its row then read: the plain output
		// needs nothing more; the status object is read for --json.
		state, jobErr := job.State, job.Error
		if g.json {
			s, perr := a.runner.Status(ctx, job.ID)
			if perr != nil {
				return perr
			}
			err = writeJSON(out, s)
			state, jobErr = s.State, s.Error
		} else {
			_, err = fmt.Fprintln(out, job.ID)
		}
		if err == nil && state == bgcmd.StateStartFailed {
			return &exitError{code: exitStartFailed, msg: "could not start: " + jobErr}
		}
		return err
	}
	if !g.json {
		if _, err := fmt.Fprintln(out, job.ID); err != nil {
			return err
		}
	}
	return g.awaitAndReport(ctx, cmd, a, job.ID, forever)
}

// awaitAndReport waits up to limit for the job (showing progress on a
// terminal), prints its status, and exits as exitCodesHelp says.
func (g *globals) awaitAndReport(ctx context.Context, cmd *cobra.Command, a *app, id string, limit time.Duration) error {
	p := startProgress(ctx, func(ctx context.Context) (*bgcmd.Status, error) { return a.runner.Status(ctx, id) })
	s, err := a.runner.Await(ctx, id, limit)
	if err == nil {
		s, err = a.readSettled(ctx, s)
	}
	p.end()
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(id)
		}
		return jobErr(id, err)
	}
	out := cmd.OutOrStdout()
	if g.json {
		err = writeJSON(out, s)
	} else {
		err = writeStatus(out, styleFor(out), s, time.Now())
	}
	if err != nil {
		return err
	}
	if !s.Settled() {
		return &exitError{code: exitStillRunning,
			msg: fmt.Sprintf("job %s is still running after %s (the wait elapsed, not the command)", id, fmtDuration(limit))}
	}
	return settledExit(s)
}
