package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Defaults used for zero-valued Policy fields.
const (
	// StandardTimeout is the default timeout when Policy.DefaultTimeout is 0.
	StandardTimeout = 2 * time.Minute
	// StandardKillGrace is the SIGTERM-to-SIGKILL grace when
	// Policy.KillGrace is 0.
	StandardKillGrace = 5 * time.Second
	// StandardMaxOutputBytes is the per-stream cap when
	// Policy.MaxOutputBytes is 0.
	StandardMaxOutputBytes int64 = 10 << 20
	// StandardOnSettleTimeout bounds an on_settle hook when
	// Policy.OnSettleTimeout is 0.
	StandardOnSettleTimeout = 10 * time.Second
	// StandardMaxQueued bounds a session's queued jobs on a host when
	// Policy.MaxQueued is 0: each waits in a supervisor process of its own.
	StandardMaxQueued = 100
)

// Policy is what a start must satisfy before anything is spawned. The zero
// value of every limit means its default; CwdRoot must be set and absolute.
// A Policy must not be modified while Check may be running.
type Policy struct {
	// AllowedExecutables are matched exactly against argv[0]: an absolute
	// entry permits only that path, a bare name permits only that literal
	// name (resolved on Path, never on a PATH the caller or the host set).
	// There is no basename fallback.
	AllowedExecutables []string
	// File is the policy file this policy was loaded from ("" for a policy
	// built in code). Refusal hints name it, so an operator knows which
	// file to change.
	File string
	// Path is the search path for bare allowlisted names, directories
	// separated by ':' as in PATH, each absolute; "" means StandardPath.
	// The child's own PATH (inherited or set by the caller) never chooses
	// the executable.
	Path string
	// AllowedEnv, when non-nil, is an allowlist of the environment
	// variables a caller may set: names or path.Match globs ("LC_*"). An
	// empty non-nil list lets the caller set none. It cannot re-allow a
	// name of the built-in deny set (BuiltinDeniedEnv). Variables inherited
	// from this process's environment are never checked.
	AllowedEnv []string
	// DeniedEnv extends the built-in deny set with more names or globs a
	// caller may not set.
	DeniedEnv []string
	// TrustedEnv names or globs variables that the host's own code sets in
	// every Request.Env, never an agent: they are exempt from every
	// environment check but the shape of names and values. It is not a
	// policy file key; bgcmd's git tools use it for the GIT_* variables
	// they set themselves. Never list a name an agent can choose the value
	// of.
	TrustedEnv []string
	// Allow is an optional veto hook, run after every other check passed,
	// with a copy of argv and the resolved cwd. A non-nil error refuses the
	// start with CodeVetoed and the error's text as the Message.
	Allow func(argv []string, cwd string) error
	// CwdRoot is the sandbox root: every cwd must resolve to it or below it.
	// It may itself be a symlink.
	CwdRoot string
	// DefaultTimeout applies when a Request has none; 0 means
	// StandardTimeout.
	DefaultTimeout time.Duration
	// MaxTimeout is the ceiling for a per-start timeout; 0 means
	// DefaultTimeout (so per-start timeouts may only shorten it).
	MaxTimeout time.Duration
	// KillGrace is the wait between SIGTERM and SIGKILL; 0 means
	// StandardKillGrace.
	KillGrace time.Duration
	// MaxOutputBytes is the per-stream byte cap and its ceiling; 0 means
	// StandardMaxOutputBytes.
	MaxOutputBytes int64
	// Cgroup, when set, is a delegated cgroup v2 directory: each job runs in
	// its own cgroup job-<id> below it, which is killed as a whole
	// (cgroup.kill) when the job ends and then removed. Empty: no cgroups.
	Cgroup string
	// OnSettle, when set, is the operator's hook: an argv (never run
	// through a shell; OnSettle[0] absolute) that bgcmd runs once for each
	// job started under this policy when it settles, with the status object
	// JSON on stdin and BGCMD_JOB_ID, BGCMD_STATE, BGCMD_EXIT_CODE and PATH
	// (Path) as its whole environment. It travels with the job, so it runs
	// also when reconcile settles the job; its failure is recorded and never
	// changes the job's state.
	OnSettle []string
	// OnSettleTimeout bounds one hook run; 0 means StandardOnSettleTimeout.
	OnSettleTimeout time.Duration
	// MaxRunning bounds the running jobs of each session on this host; a
	// start beyond it is queued until a slot frees. 0 means no limit.
	MaxRunning int
	// MaxQueued bounds the jobs of each session waiting in the queue on
	// this host (each is held by a process until it starts); a start that
	// would queue beyond it is refused with CodeQueueFull. 0 means
	// StandardMaxQueued.
	MaxQueued int
	// MaxMemory, when set, is each job's memory limit in bytes (memory.max
	// of its cgroup, which the kernel enforces by killing the job) and the
	// ceiling of a per-start one. It needs Cgroup. 0: no limit unless a
	// start sets one.
	MaxMemory int64
	// MaxProcesses, when set, bounds the processes of each job at once,
	// threads included (pids.max of its cgroup, which counts tasks: a fork
	// or a new thread beyond it fails) and is the
	// ceiling of a per-start bound. It needs Cgroup. 0: no bound unless a
	// start sets one.
	MaxProcesses int
	// Groups are the named groups a start may select (run --group NAME),
	// each with its own running limit; a start naming another group is
	// refused with CodeUnknownGroup.
	Groups map[string]Group
}

// Request is one start as a caller asks for it.
type Request struct {
	// Argv is the command; argv[0] must be exactly an allowlisted executable.
	Argv []string
	// Cwd is the working directory: "" means CwdRoot, a relative path
	// resolves against CwdRoot.
	Cwd string
	// Env nil means the child inherits the parent's environment; non-nil
	// replaces it: the child gets exactly these variables. Every variable
	// in it is checked as set by the caller (built-in deny set, DeniedEnv,
	// AllowedEnv), except with InheritedEnv.
	Env map[string]string
	// InheritedEnv says Env was built from this process's own environment,
	// the caller's variables on top (the CLI's --env without
	// --replace-env): a variable whose name and value are exactly this
	// process's own is inherited, not set by the caller, and passes
	// unchecked. Leave it false for an environment that comes from anyone
	// else (an agent's): every variable is then checked, so that no
	// refusal tells whether a guess equals one of this process's values.
	InheritedEnv bool
	// Timeout 0 means the policy default; above the ceiling is refused.
	Timeout time.Duration
	// MaxOutputBytes 0 means the policy value; above it is refused.
	MaxOutputBytes int64
	// MaxMemory and MaxProcesses 0 mean the policy's (MaxMemory,
	// MaxProcesses); above them is refused, and so is any value when the
	// policy has no Cgroup to enforce it.
	MaxMemory    int64
	MaxProcesses int
}

// Decision is an allowed start, fully resolved: the runner uses exactly
// these values. It holds an open directory (Dir): whoever gets a Decision
// must Close it.
type Decision struct {
	// Exe is the absolute path that will run: argv[0] itself when absolute,
	// joined to Cwd when relative with a slash, else the first executable
	// file of that name in the policy's search path (Policy.Path), whatever
	// PATH the child gets.
	Exe string
	// Argv is a copy of the request's argv, argv[0] unchanged.
	Argv []string
	// Cwd is the working directory with every symlink resolved, as
	// recorded. The child must not be started in it by name: a directory
	// of the path may have been swapped since the check. Start it in Dir.
	Cwd string
	// Dir is the checked working directory itself, opened (O_PATH) beneath
	// the sandbox root without following any symlink: the directory the
	// child must run in (for example by starting it in /proc/self/fd/N,
	// which a forked child follows to this very directory). Close releases
	// it.
	Dir *os.File
	// Env is the complete child environment as "K=V": os.Environ() when
	// inherited, the request's variables sorted by name when replaced.
	Env []string
	// EnvReplaced is true when the child gets exactly the request's Env.
	EnvReplaced bool
	// EnvNames are the sorted variable names when replaced (never values);
	// nil when inherited.
	EnvNames []string
	// EnvChecked are the sorted names of the variables the caller set,
	// which the environment rules checked (see CheckEnvVar); the others
	// were inherited, exactly this process's own, and passed unchecked.
	EnvChecked []string
	// Timeout and KillGrace are the effective durations.
	Timeout, KillGrace time.Duration
	// MaxOutputBytes is the effective per-stream cap.
	MaxOutputBytes int64
	// MaxMemory and MaxProcesses are the effective limits of the job's
	// cgroup (memory.max, pids.max); 0 means none.
	MaxMemory    int64
	MaxProcesses int
}

// Close releases the decision's open directory. It is safe to call more
// than once and on a nil Decision.
func (d *Decision) Close() error {
	if d == nil || d.Dir == nil {
		return nil
	}
	err := d.Dir.Close()
	d.Dir = nil
	return err
}

// Check is Policy.Check that also accepts a nil policy, which refuses every
// start with CodeNoPolicy.
func Check(p *Policy, req Request) (*Decision, error) { return p.Check(req) }

// Check decides whether req may start. It returns the resolved Decision, or
// an error that is a *Refusal (see IsRefusal) naming what was wrong and how to
// recover. A nil receiver refuses with CodeNoPolicy. Check reads the
// filesystem (cwd and search path resolution) and opens the checked
// working directory, which the caller must release with Decision.Close; a
// refusal holds nothing open.
func (p *Policy) Check(req Request) (*Decision, error) {
	if p == nil {
		return nil, refuse(CodeNoPolicy,
			"configure one first (a policy file with --policy, or policy.Load in a host)", nil,
			"no policy set: every start is refused")
	}
	if err := p.validateLimits(); err != nil {
		return nil, badPolicy(err)
	}
	if r := checkArgv(req.Argv); r != nil {
		return nil, r
	}
	if !slices.Contains(p.AllowedExecutables, req.Argv[0]) {
		return nil, notAllowlisted(req.Argv[0], p.AllowedExecutables, p.searchPath())
	}
	env, names, checked, r := p.buildEnv(req.Env, req.InheritedEnv)
	if r != nil {
		return nil, r
	}
	d := &Decision{
		Argv:        slices.Clone(req.Argv),
		Env:         env,
		EnvReplaced: req.Env != nil,
		EnvNames:    names,
		EnvChecked:  checked,
	}
	if r := p.limits(req, d); r != nil {
		return nil, r
	}
	if r := p.resources(req, d); r != nil {
		return nil, r
	}
	root, resolved, r := p.resolveCwd(req.Cwd)
	if r != nil {
		return nil, r
	}
	d.Cwd = resolved
	if d.Exe, r = resolveExe(req.Argv[0], d.Cwd, p.searchPath()); r != nil {
		return nil, r
	}
	if p.Allow != nil {
		if err := p.Allow(slices.Clone(req.Argv), d.Cwd); err != nil {
			return nil, vetoed(err)
		}
	}
	// Last, so that no refusal leaves the directory open.
	if d.Dir, r = p.openCwd(root, resolved); r != nil {
		return nil, r
	}
	return d, nil
}

// Validate reports whether the policy is usable: CwdRoot set, absolute and
// free of NUL bytes, no negative limit, MaxTimeout not below the effective
// DefaultTimeout, MaxMemory and MaxProcesses only with a Cgroup, every Path
// directory absolute, every environment entry a valid name or glob, and
// every allowlist entry one that argv[0] could match.
// It does not touch the filesystem; Check resolves CwdRoot when it runs.
func (p *Policy) Validate() error {
	if err := p.validateLimits(); err != nil {
		return err
	}
	for _, e := range p.AllowedExecutables {
		if err := checkEntry(e); err != nil {
			return fmt.Errorf("allowed_executables: %w", err)
		}
	}
	return nil
}

// policyError is a policy defect tied to the TOML key that holds it.
type policyError struct {
	key string
	msg string
}

func (e *policyError) Error() string { return e.key + ": " + e.msg }

// validateLimits checks the fields Check depends on; it is cheap enough to
// run on every Check.
func (p *Policy) validateLimits() error {
	switch {
	case p.CwdRoot == "":
		return &policyError{"cwd_root", "not set: a policy needs a sandbox root"}
	case strings.IndexByte(p.CwdRoot, 0) >= 0:
		return &policyError{"cwd_root", "contains a NUL byte"}
	case !filepath.IsAbs(p.CwdRoot):
		return &policyError{"cwd_root", fmt.Sprintf("%q is not an absolute path", p.CwdRoot)}
	case p.DefaultTimeout < 0:
		return &policyError{"default_timeout", fmt.Sprintf("%s is negative", p.DefaultTimeout)}
	case p.MaxTimeout < 0:
		return &policyError{"max_timeout", fmt.Sprintf("%s is negative", p.MaxTimeout)}
	case p.KillGrace < 0:
		return &policyError{"kill_grace", fmt.Sprintf("%s is negative", p.KillGrace)}
	case p.MaxOutputBytes < 0:
		return &policyError{"max_output_bytes", fmt.Sprintf("%d is negative", p.MaxOutputBytes)}
	case p.MaxTimeout != 0 && p.MaxTimeout < p.defaultTimeout():
		return &policyError{"max_timeout", fmt.Sprintf("%s is below default_timeout %s", p.MaxTimeout, p.defaultTimeout())}
	}
	if err := checkSearchPath(p.Path); err != nil {
		return &policyError{keyPath, err.Error()}
	}
	if err := p.validateResources(); err != nil {
		return err
	}
	return p.validateEnvPatterns()
}

// searchPath is the effective search path for bare names.
func (p *Policy) searchPath() string {
	if p.Path == "" {
		return StandardPath
	}
	return p.Path
}

// badPolicy refuses because the policy itself is unusable.
func badPolicy(err error) *Refusal {
	return refuse(CodeBadPolicy, "ask the operator to fix the policy", err,
		"the policy is unusable: %v", err)
}

// vetoed refuses with the hook's error text as the message.
func vetoed(err error) *Refusal {
	msg := err.Error()
	if msg == "" {
		msg = "vetoed by the host's policy hook"
	}
	return &Refusal{
		Code:    CodeVetoed,
		Message: msg,
		Hint:    "the host's policy hook refused this command; change the command or ask the operator",
		Err:     err,
	}
}

// QueueBound is the most jobs of a session p lets wait in the queue on a
// host: MaxQueued, or StandardMaxQueued.
func (p *Policy) QueueBound() int {
	if p == nil || p.MaxQueued <= 0 {
		return StandardMaxQueued
	}
	return p.MaxQueued
}
