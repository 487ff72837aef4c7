package agenttools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/bgcmd/bgcmd/gittools"
)

// Bounds of git tool values; gittools checks them again, with its own
// messages.
const (
	maxRev    = 256
	maxDate   = 64
	maxAuthor = 256
)

// gitNote ends every git tool's description.
const gitNote = `

Read-only: it cannot change the repository or run hooks. Values are values, never flags: a value starting with "-" is refused. Revisions are anything git rev-parse understands (HEAD~2, a branch, a tag, a hash). The result holds a bounded preview in output (truncated says if there is more), the job that ran git (job_id) and a hint; page the full output with command_output {"task_id": <job_id>, "stream": "stdout"}.`

// gitDefs are the six git tools over t.git.
func (t *Toolset) gitDefs() []*def {
	g := t.git
	rev := func(name, what string) prop {
		return prop{name: name, typ: "string", maxLen: maxRev, desc: what}
	}
	path := func(what string) prop {
		return prop{name: "path", typ: "string", maxLen: maxPath, desc: what}
	}
	count := func(what string) prop {
		return prop{name: "max_count", typ: "integer", min: 0, max: gittools.MaxMaxCount,
			desc: fmt.Sprintf("%s; 0 or absent means %d, at most %d", what, gittools.DefaultMaxCount, gittools.MaxMaxCount)}
	}
	return []*def{
		gitDef(gittools.ToolLog, "Git log",
			`List commits reachable from ref (default HEAD), newest first, one line each: full hash, author date, author, subject and decorations. Filter by path (followed across renames for a file), by author (name or email contains, ignoring case), and by commit date with since/until (YYYY-MM-DD or RFC 3339).

Example: {"ref": "main", "path": "runner/start.go", "max_count": 10, "since": "2024-01-01"}`,
			[]prop{
				rev("ref", "the revision to start from, e.g. \"main\" or \"HEAD~5\"; default HEAD"),
				path("only commits touching this file or directory, relative to the repository root"),
				count("how many commits to list"),
				{name: "since", typ: "string", maxLen: maxDate, desc: "only commits on or after this date: YYYY-MM-DD (UTC day) or RFC 3339"},
				{name: "until", typ: "string", maxLen: maxDate, desc: "only commits on or before this date: YYYY-MM-DD (UTC day, inclusive) or RFC 3339"},
				{name: "author", typ: "string", maxLen: maxAuthor, desc: "only commits whose author name or email contains this text, ignoring case"},
			}, g.Log),
		gitDef(gittools.ToolShow, "Git show",
			`Show what rev names: a commit with its patch (or, with stat, its diffstat), a tag, a tree or a file. With path: the file (or directory listing) at path as of rev.

Example: {"rev": "HEAD~1", "stat": true}; {"rev": "v1.2.0", "path": "go.mod"}`,
			[]prop{
				rev("rev", "the revision to show; default HEAD"),
				path("a file or directory inside rev, relative to the repository root"),
				{name: "stat", typ: "boolean", desc: "show the commit's diffstat instead of its patch"},
			}, g.Show),
		gitDef(gittools.ToolDiff, "Git diff",
			`Show changes. base and head: from base to head. base alone: from base to the work tree. staged: from base (default HEAD) to the index. Neither: the unstaged changes (index to work tree). Limit to paths; stat gives a diffstat; context sets the lines of context (default 3).

Example: {"base": "main", "head": "HEAD", "paths": ["runner"], "stat": true}`,
			[]prop{
				rev("base", "the old side; required when head is set"),
				rev("head", "the new side (not with staged)"),
				{name: "paths", typ: "array", maxLen: gittools.MaxPaths,
					desc: fmt.Sprintf("limit the diff to these files or directories, relative to the root; at most %d", gittools.MaxPaths)},
				{name: "staged", typ: "boolean", desc: "compare the index (staged changes) instead of the work tree"},
				{name: "stat", typ: "boolean", desc: "show a diffstat instead of the patch"},
				{name: "context", typ: "integer", min: 0, max: gittools.MaxContext,
					desc: fmt.Sprintf("lines of context around each change, 0 to %d; absent means 3", gittools.MaxContext)},
			}, g.Diff),
		gitDef(gittools.ToolBlame, "Git blame",
			`Show who last changed each line of a file as of rev (default HEAD; uncommitted changes are not blamed), optionally only lines start_line to end_line (1-based, inclusive).

Example: {"path": "runner/start.go", "start_line": 40, "end_line": 80}`,
			[]prop{
				{name: "path", typ: "string", required: true, maxLen: maxPath, desc: "the file to blame, relative to the repository root"},
				rev("rev", "the revision to blame at; default HEAD"),
				{name: "start_line", typ: "integer", min: 0, max: gittools.MaxLine, desc: "first line to blame, from 1; 0 or absent means the first"},
				{name: "end_line", typ: "integer", min: 0, max: gittools.MaxLine, desc: "last line to blame, inclusive; 0 or absent means the last"},
			}, g.Blame),
		gitDef(gittools.ToolMergeBase, "Git merge-base",
			`Find the best common ancestor of two commits, e.g. where a branch forked from main.

Example: {"a": "main", "b": "feature/login"}`,
			[]prop{
				{name: "a", typ: "string", required: true, maxLen: maxRev, desc: "the first commit, e.g. \"main\""},
				{name: "b", typ: "string", required: true, maxLen: maxRev, desc: "the second commit, e.g. \"HEAD\""},
			}, g.MergeBase),
		gitDef(gittools.ToolLsFiles, "Git ls-files",
			`List the files in the index (tracked files), optionally under path and matching a glob pattern ("*" within one directory level, "**" across levels).

Example: {"path": "cmd", "pattern": "**/*_test.go", "max_count": 100}`,
			[]prop{
				path("list only this file or directory, relative to the repository root"),
				{name: "pattern", typ: "string", maxLen: maxPath, desc: `a glob relative to path (or the root), e.g. "*.go" or "src/**/*_test.go"`},
				count("how many files to show in output (the job's full output lists them all)"),
			}, g.LsFiles),
	}
}

// gitDef makes a read-only git tool from a gittools method.
func gitDef[A any](name, title, desc string, props []prop, fn func(context.Context, A) (*gittools.Result, error)) *def {
	return &def{
		Tool: Tool{Name: name, Title: title, Description: desc + gitNote,
			Annotations: Annotations{ReadOnly: true}},
		props: props,
		call: func(ctx context.Context, raw json.RawMessage) (counted, error) {
			var a A
			if err := decode(raw, &a); err != nil {
				return nil, err
			}
			res, err := fn(ctx, a)
			var oe *gittools.OutsideError
			if errors.As(err, &oe) {
				return nil, &ToolError{Code: codeRepositoryRefused, Message: err.Error(),
					Hint: "the repository itself is refused, not your arguments; no git tool can read it until the operator removes that pointer"}
			}
			var ae *gittools.ArgError
			if errors.As(err, &ae) && len(ae.Try) > 0 {
				worded := *ae
				worded.Hint = strings.TrimPrefix(ae.Hint+" ("+tryWords(ae.Try)+")", " ")
				worded.Try = nil
				return nil, &worded
			}
			if err != nil {
				return nil, err
			}
			res.Hint = res.Explain(modelCalls)
			return &GitResult{Result: res}, nil
		},
	}
}

// codeRepositoryRefused: a file of the served repository points git outside
// it (gittools.OutsideError).
const codeRepositoryRefused = "repository_refused"

// modelCalls names the calls of a git result's hint as a model makes them.
var modelCalls = gittools.Calls{
	Output: func(id, stream string) string {
		return fmt.Sprintf("command_output {task_id: %s, stream: %s}", id, stream)
	},
	Wait: func(id string) string { return fmt.Sprintf("command_wait {task_id: %s}", id) },
}

// tryWords names the tool calls that help to recover, as a model calls them.
func tryWords(try []gittools.Try) string {
	parts := make([]string, len(try))
	for i, t := range try {
		parts[i] = t.Words(t.Tool, t.With)
	}
	return strings.Join(parts, ", ")
}
