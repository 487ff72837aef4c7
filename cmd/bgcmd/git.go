//go:build !bgcmd_lean

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/gittools"
	"github.com/bgcmd/bgcmd/runner"
)

// gitMaxWait is how long a git command waits for git: past git's own
// timeout and kill grace, so that a call returns a settled job unless
// something is badly wrong.
const gitMaxWait = gittools.DefaultTimeout + 15*time.Second

// gitStderrLines is how many lines of git's stderr a failure shows.
const gitStderrLines = 10

// gitCall runs one tool over an open toolset.
type gitCall func(ctx context.Context, t *gittools.Toolset) (*gittools.Result, error)

func newGitCmd(g *globals) *cobra.Command {
	var repo string
	cmd := &cobra.Command{
		Use:   "git log|show|diff|blame|merge-base|ls-files [--repo DIR] [flags]",
		Short: gitShort,
		Long: `Run one of the six read-only git tools (the agent tools git_log, git_show,
git_diff, git_blame, git_merge_base and git_ls_files) over the git work tree
containing --repo DIR (default: the one containing the current directory).
Flags are the tools' arguments: max_count is --max-count.

Every value is a value, never an option: one starting with "-" is refused.
Revisions are anything git rev-parse understands (HEAD~2, a branch, a tag,
a hash) and are verified before git runs. Paths are relative to the
repository's top level (not the current directory), or absolute, and must
stay inside it. No hook, pager, filter or external diff runs, and nothing
is written to the repository, and nothing outside it is read: a repository
whose .git file, commondir, alternates, configuration includes or symlinks
in .git point outside it is refused (exit 2), naming the file.

git runs as a job in bgcmd's store (home and session as for every command),
so its complete output is kept and bgcmd list shows it as the call (label
display). Without --json the whole output is printed as git printed it
(ls-files: --max-count files; when there are more, a last line on stderr
names the bgcmd output command that lists them all). With --json the result
is one object: tool, display, job_id, argv, status, reason, stream, output
(a bounded preview), truncated, hint.

Exit codes: 0 success, 1 git failed (its message on stderr) or a runtime
error, 2 usage error (a refused value, an unknown revision, no git work tree,
a repository that points outside itself), 5 git still running after the wait (bgcmd wait
ID), 130 interrupted (git keeps running).`,
		Example: `  bgcmd git log --repo . --max-count 5
  bgcmd git show --repo ~/src/app --rev v1.2.0 --stat
  bgcmd git diff --repo . --base main --head HEAD --path cmd --path go.mod
  bgcmd git blame --repo . --path runner/start.go --start-line 40 --end-line 80
  bgcmd git merge-base --repo . --a main --b feature/login
  bgcmd git ls-files --repo . --pattern '**/*_test.go'`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			const want = "log, show, diff, blame, merge-base or ls-files"
			if len(args) > 0 {
				return &usageError{fmt.Errorf("unknown git command %q: want %s (bgcmd git --help)", args[0], want)}
			}
			return &usageError{fmt.Errorf("name a git command: %s (bgcmd git --help)", want)}
		},
	}
	cmd.PersistentFlags().StringVar(&repo, "repo", "", "a directory inside the git work tree to read (default: the current directory's)")
	cmd.AddCommand(newGitLogCmd(g, &repo), newGitShowCmd(g, &repo), newGitDiffCmd(g, &repo),
		newGitBlameCmd(g, &repo), newGitMergeBaseCmd(g, &repo), newGitLsFilesCmd(g, &repo))
	return cmd
}

// gitSubCmd makes one git subcommand that calls the tool made by call.
func gitSubCmd(g *globals, repo *string, use, short, long string, call func(*cobra.Command) gitCall) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.runGitTool(cmd, *repo, call(cmd))
		},
	}
}

func newGitLogCmd(g *globals, repo *string) *cobra.Command {
	var a gittools.LogArgs
	cmd := gitSubCmd(g, repo, "log [--repo DIR] [--ref REV] [--path P] [--max-count N] [--since D] [--until D] [--author TEXT]",
		"List commits, newest first, one line each",
		`List the commits reachable from --ref (default HEAD), newest first, one line
each: full hash, author date, author, subject and decorations. --path keeps
the commits touching a file (followed across renames) or directory; --author
keeps those whose author name or email contains the text, ignoring case;
--since and --until bound the commit date (YYYY-MM-DD, a UTC day, inclusive,
or RFC 3339).`,
		func(*cobra.Command) gitCall {
			return func(ctx context.Context, t *gittools.Toolset) (*gittools.Result, error) { return t.Log(ctx, a) }
		})
	f := cmd.Flags()
	f.StringVar(&a.Ref, "ref", "", "the revision to start from (default HEAD)")
	f.StringVar(&a.Path, "path", "", "only commits touching this file or directory")
	f.IntVar(&a.MaxCount, "max-count", 0, fmt.Sprintf("how many commits to list (0 means %d, at most %d)", gittools.DefaultMaxCount, gittools.MaxMaxCount))
	f.StringVar(&a.Since, "since", "", "only commits on or after this date (YYYY-MM-DD or RFC 3339)")
	f.StringVar(&a.Until, "until", "", "only commits on or before this date (YYYY-MM-DD or RFC 3339)")
	f.StringVar(&a.Author, "author", "", "only commits whose author name or email contains this text")
	return cmd
}

func newGitShowCmd(g *globals, repo *string) *cobra.Command {
	var a gittools.ShowArgs
	cmd := gitSubCmd(g, repo, "show [--repo DIR] [--rev REV] [--path P] [--stat]",
		"Show a commit, tag, tree or file",
		`Show what --rev (default HEAD) names: a commit with its patch (its diffstat
with --stat), a tag, a tree or a blob. With --path: the file, or the
directory's listing, at that path in --rev; with --path and --stat: the
commit's diffstat limited to the path.`,
		func(*cobra.Command) gitCall {
			return func(ctx context.Context, t *gittools.Toolset) (*gittools.Result, error) { return t.Show(ctx, a) }
		})
	f := cmd.Flags()
	f.StringVar(&a.Rev, "rev", "", "the revision to show (default HEAD)")
	f.StringVar(&a.Path, "path", "", "a file or directory inside the revision")
	f.BoolVar(&a.Stat, "stat", false, "the diffstat instead of the patch")
	return cmd
}

func newGitDiffCmd(g *globals, repo *string) *cobra.Command {
	var (
		a     gittools.DiffArgs
		lines int
	)
	cmd := gitSubCmd(g, repo, "diff [--repo DIR] [--base REV [--head REV]] [--path P]... [--staged] [--stat] [--context N]",
		"Show changes between revisions, the index and the work tree",
		`Show changes. --base and --head: from base to head. --base alone: from base
to the work tree. --staged: from --base (default HEAD) to the index.
Neither: the unstaged changes (index to work tree). --path (repeatable)
limits the diff to files or directories; --stat gives a diffstat; --context
sets the lines of context (git's default of 3 when unset). The index is
never written.`,
		func(cmd *cobra.Command) gitCall {
			return func(ctx context.Context, t *gittools.Toolset) (*gittools.Result, error) {
				args := a
				if cmd.Flags().Changed("context") {
					n := lines
					args.Context = &n
				}
				return t.Diff(ctx, args)
			}
		})
	f := cmd.Flags()
	f.StringVar(&a.Base, "base", "", "the old side (required with --head)")
	f.StringVar(&a.Head, "head", "", "the new side (not with --staged)")
	f.StringArrayVar(&a.Paths, "path", nil, fmt.Sprintf("limit the diff to this file or directory (repeatable, at most %d)", gittools.MaxPaths))
	f.BoolVar(&a.Staged, "staged", false, "compare the index (staged changes) instead of the work tree")
	f.BoolVar(&a.Stat, "stat", false, "the diffstat instead of the patch")
	f.IntVar(&lines, "context", 0, fmt.Sprintf("lines of context around each change, 0 to %d (default git's 3)", gittools.MaxContext))
	return cmd
}

func newGitBlameCmd(g *globals, repo *string) *cobra.Command {
	var a gittools.BlameArgs
	cmd := gitSubCmd(g, repo, "blame [--repo DIR] --path FILE [--rev REV] [--start-line N] [--end-line N]",
		"Show who last changed each line of a file",
		`Show who last changed each line of --path as of --rev (default HEAD;
uncommitted changes are not blamed), optionally only the lines --start-line
to --end-line (from 1, inclusive; 0 means the first or the last line).`,
		func(*cobra.Command) gitCall {
			return func(ctx context.Context, t *gittools.Toolset) (*gittools.Result, error) { return t.Blame(ctx, a) }
		})
	f := cmd.Flags()
	f.StringVar(&a.Path, "path", "", "the file to blame (required)")
	f.StringVar(&a.Rev, "rev", "", "the revision to blame at (default HEAD)")
	f.IntVar(&a.StartLine, "start-line", 0, "the first line to blame, from 1 (0 means the first)")
	f.IntVar(&a.EndLine, "end-line", 0, "the last line to blame, inclusive (0 means the last)")
	return cmd
}

func newGitMergeBaseCmd(g *globals, repo *string) *cobra.Command {
	var a gittools.MergeBaseArgs
	cmd := gitSubCmd(g, repo, "merge-base [--repo DIR] --a REV --b REV",
		"Find the best common ancestor of two commits",
		`Print the best common ancestor of the commits --a and --b, e.g. where a
branch forked from main. Two commits with no common ancestor exit 1, as
git merge-base does.`,
		func(*cobra.Command) gitCall {
			return func(ctx context.Context, t *gittools.Toolset) (*gittools.Result, error) { return t.MergeBase(ctx, a) }
		})
	f := cmd.Flags()
	f.StringVar(&a.A, "a", "", "the first commit (required)")
	f.StringVar(&a.B, "b", "", "the second commit (required)")
	return cmd
}

func newGitLsFilesCmd(g *globals, repo *string) *cobra.Command {
	var a gittools.LsFilesArgs
	cmd := gitSubCmd(g, repo, "ls-files [--repo DIR] [--path P] [--pattern GLOB] [--max-count N]",
		"List the files in the index",
		`List the tracked files (the index), optionally under --path and matching the
glob --pattern ("*" within one directory level, "**" across levels),
relative to --path when set, else to the top level. At most --max-count
files are printed; the job's output (bgcmd output ID) lists them all.`,
		func(*cobra.Command) gitCall {
			return func(ctx context.Context, t *gittools.Toolset) (*gittools.Result, error) { return t.LsFiles(ctx, a) }
		})
	f := cmd.Flags()
	f.StringVar(&a.Path, "path", "", "list only this file or directory")
	f.StringVar(&a.Pattern, "pattern", "", `a glob such as "*.go" or "src/**/*_test.go"`)
	f.IntVar(&a.MaxCount, "max-count", 0, fmt.Sprintf("how many files to print (0 means %d, at most %d)", gittools.DefaultMaxCount, gittools.MaxMaxCount))
	return cmd
}

// runGitTool opens a git toolset over repo (its jobs in the home's store,
// supervised detached, in the session), runs call and reports its result.
// Without repo it serves the work tree holding the current directory.
func (g *globals) runGitTool(cmd *cobra.Command, repo string, call gitCall) error {
	what := "--repo " + repo
	if repo == "" {
		top, err := gittools.WorkTreeOf(".")
		if err != nil {
			return &usageError{fmt.Errorf("no --repo, and %s; pass --repo DIR or run bgcmd git inside a git work tree", oneLine(err.Error()))}
		}
		repo, what = top, "the work tree "+top
	}
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	home, err := g.homeDir()
	if err != nil {
		return err
	}
	store, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the bgcmd binary for detached supervisors: %w", err)
	}
	session := g.sessionName()
	ts, err := gittools.New(ctx, gittools.Options{
		Repo:    repo,
		Session: session,
		MaxWait: gitMaxWait,
		Runner: runner.Options{Store: store, Home: home, Detached: true, Binary: bin,
			Session: session},
	})
	var oe *gittools.OutsideError
	switch {
	case errors.As(err, &oe):
		return &usageError{fmt.Errorf("%s is refused: %s", what, oneLine(oe.Error()))}
	case errors.Is(err, gittools.ErrNotRepository):
		return &usageError{fmt.Errorf("%s: %s; pass a directory inside a git work tree", what, oneLine(err.Error()))}
	case err != nil:
		return err
	}
	defer ts.Close(context.WithoutCancel(ctx))
	res, err := call(ctx, ts)
	if err != nil {
		return gitCallErr(ctx, err)
	}
	return g.reportGit(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), ts, res)
}

// gitCallErr maps a tool's error to the CLI's: a refused value or an
// unknown revision is a usage error in terms of flags, and so is a
// repository that points outside itself.
func gitCallErr(ctx context.Context, err error) error {
	var ae *gittools.ArgError
	switch {
	case errors.As(err, &ae):
		return &usageError{errors.New(gitArgMessage(ae))}
	case errors.Is(err, gittools.ErrUnknownRevision), errors.Is(err, gittools.ErrOutsideRepository):
		return &usageError{err}
	case ctx.Err() != nil:
		return &exitError{code: exitInterrupted,
			msg: fmt.Sprintf("interrupted; a git job already started keeps running (bgcmd list shows it): %v", err)}
	}
	return err
}

// gitArgMessage renders a refused value with the flag's name:
// `git log: --ref "-x": <reason>; <hint> (bgcmd git log lists commits)`.
func gitArgMessage(ae *gittools.ArgError) string {
	v := ae.Value
	const maxShown = 200
	quoted := fmt.Sprintf("%q", v)
	if len(v) > maxShown {
		quoted = fmt.Sprintf("%q...", v[:maxShown])
	}
	msg := fmt.Sprintf("%s: %s %s: %s", gitCommandName(ae.Tool), gitFlagName(ae.Field), quoted, ae.Reason)
	if ae.Hint != "" {
		msg += "; " + ae.Hint
	}
	if len(ae.Try) > 0 {
		parts := make([]string, len(ae.Try))
		for i, t := range ae.Try {
			with := ""
			if t.With != "" {
				with = gitFlagName(t.With)
			}
			parts[i] = t.Words("bgcmd "+gitCommandName(t.Tool), with)
		}
		msg += " (" + strings.Join(parts, ", ") + ")"
	}
	return oneLine(msg)
}

// gitCommandName is "git log" for the tool git_log.
func gitCommandName(tool string) string {
	return "git " + strings.ReplaceAll(strings.TrimPrefix(tool, "git_"), "_", "-")
}

// gitFlagName is the flag of an argument: max_count is --max-count, and
// paths[i] the (i+1)th --path.
func gitFlagName(field string) string {
	if rest, ok := strings.CutPrefix(field, "paths["); ok {
		if i, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); err == nil {
			return fmt.Sprintf("--path (#%d)", i+1)
		}
	}
	if field == "paths" {
		return "--path"
	}
	return "--" + strings.ReplaceAll(field, "_", "-")
}

// cliHint words a result's hint for a person, in bgcmd commands.
func (g *globals) cliHint(res *gittools.Result) string {
	prog := g.prog()
	return res.Explain(gittools.Calls{
		Output: func(id, stream string) string {
			if stream == "stdout" {
				return fmt.Sprintf("%s output %s", prog, id)
			}
			return fmt.Sprintf("%s output %s --stream %s", prog, id, stream)
		},
		Wait:  func(id string) string { return fmt.Sprintf("%s wait %s", prog, id) },
		Quote: oneLine,
	})
}

// prog is how a hint names bgcmd: with --home when one was given.
func (g *globals) prog() string {
	if g.home != "" {
		return commandLine([]string{"bgcmd", "--home", g.home})
	}
	return "bgcmd"
}

// reportGit prints a tool's result and maps how git ended to the exit code.
// Without --json it prints git's whole stdout, read from the job's output
// as git wrote it (git ls-files: the --max-count files of the result), then
// on success git's stderr, if any, to stderr. With --json it prints the
// Result with the CLI's hint.
func (g *globals) reportGit(ctx context.Context, out, errw io.Writer, ts *gittools.Toolset, res *gittools.Result) error {
	st := res.Status
	hint := g.cliHint(res)
	ok := st.Settled() && st.State == bgcmd.StateExited && st.ExitCode != nil && *st.ExitCode == 0
	switch {
	case g.json:
		shown := *res
		shown.Hint = hint
		if err := writeJSON(out, &shown); err != nil {
			return err
		}
	case !st.Settled() || st.Stdout.Bytes == 0:
	case res.Tool == gittools.ToolLsFiles:
		if _, err := io.WriteString(out, res.Output); err != nil {
			return err
		}
		if res.Truncated {
			fmt.Fprintln(errw, "bgcmd: output truncated at --max-count; "+hint)
		}
	default:
		if err := copyGitOutput(ctx, ts, res.JobID, bgcmd.Stdout, out); err != nil {
			return err
		}
		if res.Capped {
			fmt.Fprintln(errw, "bgcmd: "+hint)
		}
	}
	if !st.Settled() {
		return &exitError{code: exitStillRunning, msg: fmt.Sprintf("git is still running as job %s: %s", res.JobID, hint)}
	}
	if ok && !g.json && st.Stderr.Bytes > 0 {
		// git succeeded with warnings: pass them on.
		if err := copyGitOutput(ctx, ts, res.JobID, bgcmd.Stderr, errw); err != nil {
			return err
		}
	}
	if ok {
		return nil
	}
	return &exitError{code: exitRuntime, msg: gitFailure(ctx, ts, res, g.prog())}
}

// copyGitOutput writes the whole of a settled job's stream to w, exactly
// the bytes git wrote, a page at a time.
func copyGitOutput(ctx context.Context, ts *gittools.Toolset, id string, stream bgcmd.Stream, w io.Writer) error {
	var off int64
	for {
		p, err := ts.Runner().ReadOutput(ctx, id, stream,
			artifacts.Page{Raw: true, Offset: off, Limit: artifacts.MaxPageBytes})
		if err != nil {
			return fmt.Errorf("read the output of git job %s: %w", id, err)
		}
		if _, err := w.Write(p.Data); err != nil {
			return err
		}
		if !p.HasMore || p.NextOffset <= off {
			return nil
		}
		off = p.NextOffset
	}
}

// gitFailure explains a git command that did not succeed: how it ended,
// where its output is (prog names bgcmd) and the end of its stderr.
func gitFailure(ctx context.Context, ts *gittools.Toolset, res *gittools.Result, prog string) string {
	st := res.Status
	name := gitCommandName(res.Tool)
	var head string
	switch {
	case res.Tool == gittools.ToolMergeBase && st.State == bgcmd.StateExited && st.ExitCode != nil &&
		*st.ExitCode == 1 && st.Stdout.Bytes == 0:
		head = name + ": the two commits have no common ancestor (git exited with status 1)"
	case st.State == bgcmd.StateExited && st.ExitCode != nil:
		head = fmt.Sprintf("%s: git exited with status %d", name, *st.ExitCode)
	case st.State == bgcmd.StateExited && st.Signal != "":
		head = fmt.Sprintf("%s: git exited on signal %s", name, st.Signal)
	default:
		head = fmt.Sprintf("%s: git did not finish normally (%s)", name, st.State)
	}
	if st.Error != "" {
		head += ": " + oneLine(st.Error)
	}
	stream := " --stream stderr"
	if st.Stderr.Bytes == 0 {
		stream = ""
	}
	head += fmt.Sprintf(" [job %s: %s output %s%s]", res.JobID, prog, res.JobID, stream)
	text := st.TailPreview
	if st.Stderr.Bytes > 0 {
		p, err := ts.Runner().ReadOutput(ctx, res.JobID, bgcmd.Stderr,
			artifacts.Page{Unit: artifacts.UnitLines, Tail: gitStderrLines})
		if err == nil {
			text = p.Text
		}
	} else if st.Stdout.Bytes > 0 {
		text = "" // stdout was printed already
	}
	var b strings.Builder
	b.WriteString(head)
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString("\n  " + oneLine(l))
		}
	}
	return b.String()
}
