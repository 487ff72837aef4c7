package runner

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/bgcmd/bgcmd"
)

// RerunOptions are the choices of a rerun.
type RerunOptions struct {
	// Env gives the values of the environment: required, for every one of
	// its variable names, when the job ran with a replaced environment
	// (values are never stored); otherwise nil inherits this process's
	// environment and a non-nil map replaces it.
	Env map[string]string
	// InheritedEnv says values of Env were taken from this process's own
	// environment (see StartOptions.InheritedEnv).
	InheritedEnv bool
	// Session, when set, must be the job's session (a caller scoped to a
	// session reruns only its own jobs); "" accepts any.
	Session string
}

// MissingEnvError refuses a rerun of a job that ran with a replaced
// environment when the values of some of its variables were not given.
type MissingEnvError struct {
	JobID string
	// Missing are the variable names without a value, sorted.
	Missing []string
}

func (e *MissingEnvError) Error() string {
	flags := make([]string, len(e.Missing))
	for i, n := range e.Missing {
		flags[i] = "--env " + n + "=…"
	}
	return fmt.Sprintf("job %s ran with a replaced environment and bgcmd never stores values: give each of its variables again (missing: %s), e.g. %s",
		e.JobID, strings.Join(e.Missing, ", "), strings.Join(flags, " "))
}

// Rerun starts a new job with the argv, working directory, group, priority,
// timeout, output cap and labels of job id, recording rerun_of. It passes the policy
// (and the queue) as a new start does. A job that ran with a replaced
// environment is rerun only with opts.Env holding a value for each of its
// variable names (a *MissingEnvError lists the missing ones); an inherited
// environment is taken from this process.
func (r *Runner) Rerun(ctx context.Context, id string, opts RerunOptions) (*bgcmd.Job, error) {
	rec, err := r.store.Get(ctx, id)
	if err == nil && opts.Session != "" && rec.Session != opts.Session {
		err = fmt.Errorf("get job: job %q: %w", id, bgcmd.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("rerun: %w", err)
	}
	env := opts.Env
	if rec.EnvReplaced {
		var missing []string
		for _, n := range rec.EnvNames {
			if _, ok := opts.Env[n]; !ok {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return nil, &MissingEnvError{JobID: rec.ID, Missing: missing}
		}
		if env == nil {
			env = map[string]string{}
		}
	}
	var lim bgcmd.ResourceLimits // the limits it ran under, checked again by the policy
	if rec.ResourceLimits != nil {
		lim = *rec.ResourceLimits
	}
	return r.Start(ctx, rec.Argv, StartOptions{Cwd: rec.Cwd, Env: env, InheritedEnv: opts.InheritedEnv, Timeout: rec.Timeout,
		MaxOutputBytes: rec.MaxOutputBytes, Session: rec.Session, Labels: rec.Labels,
		Group: rec.Group, Priority: rec.Priority, rerunOf: rec.ID,
		MaxMemory: lim.MemoryMaxBytes, MaxProcesses: lim.PidsMax})
}
