package gittools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// Defaults for zero-valued Options fields.
const (
	// DefaultMaxWait is how long a tool call waits for git to finish before
	// it returns the running job.
	DefaultMaxWait = 30 * time.Second
	// DefaultTimeout bounds each git command.
	DefaultTimeout = 60 * time.Second
	// DefaultMaxOutputBytes caps each stream of a git command.
	DefaultMaxOutputBytes int64 = 10 << 20
	// killGrace is the SIGTERM-to-SIGKILL grace of a git command.
	killGrace = 2 * time.Second
)

// Options configure New. Repo is required; zero values of the others take
// the documented defaults.
type Options struct {
	// Repo is a directory inside the work tree of a git repository. The
	// toolset serves that work tree's top level, fixed for its lifetime.
	Repo string
	// Git is the git executable; default the "git" found on PATH. It is
	// resolved to an absolute path without symlinks, and that exact path is
	// the only executable the private policy allows.
	Git string
	// Runner is a template for the toolset's own runner: New copies it and
	// replaces its Policy with the private one. Store and Home are required.
	Runner runner.Options
	// Session is the session of the jobs the tools start; default the
	// runner's.
	Session string
	// MaxWait is how long a tool call waits for git to finish before
	// returning the running job; default DefaultMaxWait.
	MaxWait time.Duration
	// Timeout bounds each git command; default DefaultTimeout.
	Timeout time.Duration
	// MaxOutputBytes caps each stream of a git command; default
	// DefaultMaxOutputBytes.
	MaxOutputBytes int64
}

// Toolset is the six git tools over one repository. It is safe for
// concurrent use; Close it when done. Every tool call first checks that the
// repository points nowhere outside itself and returns an *OutsideError,
// starting nothing, when it does.
type Toolset struct {
	root    string
	gitPath string
	env     map[string]string
	policy  *policy.Policy
	r       *runner.Runner
	session string
	maxWait time.Duration
}

// New checks the repository and the git executable and makes a Toolset with
// its own runner under a private policy: git alone, by absolute path, with
// the repository's top level as the sandbox root. It fails with an error
// wrapping ErrNotRepository when opts.Repo is not inside a git work tree
// (a bare repository, a plain directory, a work tree that core.worktree
// moves elsewhere), with an *OutsideError when a file of the repository
// points outside it (checked before git reads the repository at all), and
// with a plain error when git cannot be found or the runner cannot be made.
// ctx bounds the checks and the runner's opening.
func New(ctx context.Context, opts Options) (*Toolset, error) {
	gitPath, err := findGit(opts.Git)
	if err != nil {
		return nil, fmt.Errorf("new git toolset: %w", err)
	}
	root, err := topLevel(ctx, gitPath, opts.Repo)
	if err != nil {
		return nil, fmt.Errorf("new git toolset: %w", err)
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = DefaultMaxOutputBytes
	}
	pol := &policy.Policy{
		AllowedExecutables: []string{gitPath},
		CwdRoot:            root,
		DefaultTimeout:     opts.Timeout,
		MaxTimeout:         opts.Timeout,
		KillGrace:          killGrace,
		MaxOutputBytes:     opts.MaxOutputBytes,
		// The GIT_* variables are baseEnv's and gitEnv's, never an agent's.
		TrustedEnv: []string{"GIT_*"},
	}
	if err := pol.Validate(); err != nil {
		return nil, fmt.Errorf("new git toolset: private policy: %w", err)
	}
	ropts := opts.Runner
	ropts.Policy = pol
	r, err := runner.New(ctx, ropts)
	if err != nil {
		return nil, fmt.Errorf("new git toolset: %w", err)
	}
	return &Toolset{root: root, gitPath: gitPath, env: baseEnv(root), policy: pol,
		r: r, session: opts.Session, maxWait: opts.MaxWait}, nil
}

// Root returns the repository's top level, with symlinks resolved: the
// sandbox root and the directory every git command runs in.
func (t *Toolset) Root() string { return t.root }

// Git returns the absolute path of the git executable the tools run.
func (t *Toolset) Git() string { return t.gitPath }

// Runner returns the toolset's runner, for reading a job's full output or
// waiting for a job a tool call returned while it was still running. Its
// policy allows git alone.
func (t *Toolset) Runner() *runner.Runner { return t.r }

// Close waits for the in-process supervisors of the toolset's jobs, or
// until ctx is done (see runner.Runner.Close).
func (t *Toolset) Close(ctx context.Context) error { return t.r.Close(ctx) }

// findGit resolves the git executable to an absolute path without
// symlinks and checks that it is an executable file.
func findGit(git string) (string, error) {
	if git == "" {
		p, err := exec.LookPath("git")
		if err != nil {
			return "", fmt.Errorf("find git: %w (install git or set Options.Git)", err)
		}
		git = p
	}
	abs, err := filepath.Abs(git)
	if err != nil {
		return "", fmt.Errorf("find git %s: %w", git, err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", fmt.Errorf("find git %s: %w", git, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("find git %s: %w", git, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("find git: %s is not an executable file", abs)
	}
	return abs, nil
}

// topLevel returns the top level of the work tree repo is in, with symlinks
// resolved. The top level must hold the repository's .git (a directory, or
// the file of a linked work tree): a work tree that core.worktree moves
// somewhere else is refused.
func topLevel(ctx context.Context, gitPath, repo string) (string, error) {
	if repo == "" {
		return "", fmt.Errorf("%w: no repository given (Options.Repo is required)", ErrNotRepository)
	}
	abs, err := filepath.Abs(repo)
	if err != nil {
		return "", fmt.Errorf("repository %s: %w", repo, err)
	}
	dir, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("repository %s: %w", repo, err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: %s is not a directory", ErrNotRepository, repo)
	}
	candidate, err := WorkTreeOf(dir)
	if err != nil {
		return "", err
	}
	// Before git reads anything: nothing the repository's files point at
	// may be outside it.
	if err := confineRoot(ctx, gitPath, candidate); err != nil {
		return "", err
	}
	env := baseEnv(dir)
	delete(env, "GIT_CEILING_DIRECTORIES") // repo may be below the top level
	delete(env, "GIT_WORK_TREE")           // that is what is being found
	ctx, cancel := context.WithTimeout(ctx, internalTimeout)
	defer cancel()
	out, err := runGit(ctx, gitPath, dir, env, "rev-parse", "--show-toplevel")
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) && ge.code > 0 {
			return "", fmt.Errorf("%w: %s (%s)", ErrNotRepository, repo, ge.stderr)
		}
		return "", fmt.Errorf("repository %s: %w", repo, err)
	}
	top := strings.TrimSuffix(string(out), "\n")
	if top == "" {
		return "", fmt.Errorf("%w: %s has no work tree", ErrNotRepository, repo)
	}
	if top, err = filepath.EvalSymlinks(top); err != nil {
		return "", fmt.Errorf("repository %s: top level: %w", repo, err)
	}
	if _, err := os.Lstat(filepath.Join(top, ".git")); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s: its work tree %s is set by core.worktree, not the directory holding .git", ErrNotRepository, repo, top)
	}
	if top != candidate {
		return "", fmt.Errorf("%w: %s: git's work tree %s is not %s, the directory holding .git", ErrNotRepository, repo, top, candidate)
	}
	if !within(dir, top) {
		return "", fmt.Errorf("%w: %s is outside its work tree %s (core.worktree?)", ErrNotRepository, repo, top)
	}
	return top, nil
}
