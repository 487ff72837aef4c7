package agenttools

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// Bounds of run_command_bg's arguments. Limits within them are the
// policy's to refuse.
const (
	maxArgv      = 4096
	maxArgBytes  = 128 << 10
	maxEnv       = 512
	maxLabels    = 32
	maxLabelSize = 256
	maxPath      = 4096
	// maxTimeoutMS keeps a timeout far from overflowing a time.Duration;
	// the policy's ceiling is usually far lower.
	maxTimeoutMS = 30 * 24 * int64(time.Hour/time.Millisecond)
	maxWaitMS    = int64(MaxWait / time.Millisecond)
)

type runArgs struct {
	Argv           json.RawMessage   `json:"argv"`
	Cwd            string            `json:"cwd"`
	Env            map[string]string `json:"env"`
	TimeoutMS      int64             `json:"timeout_ms"`
	MaxOutputBytes int64             `json:"max_output_bytes"`
	MaxMemoryBytes int64             `json:"max_memory_bytes"`
	MaxProcesses   int64             `json:"max_processes"`
	Labels         map[string]string `json:"labels"`
	WaitMS         int64             `json:"wait_ms"`
	Group          string            `json:"group"`
	After          []string          `json:"after"`
	Priority       int64             `json:"priority"`
}

func (t *Toolset) runDef() *def {
	return &def{
		Tool: Tool{
			Name:  "run_command_bg",
			Title: "Run a command in the background",
			Description: `Start a command in the background and return at once with its task_id (or, with wait_ms, after waiting up to that long for it to finish).

The command is an argv array, never a shell line: argv[0] is exactly an allowed executable and each argument is its own element. Pipes, &&, ;, redirections, $VARS, globs and ~ are not interpreted: start chained commands as separate calls. ` + t.policyNote() + `

The command keeps running after this call returns, even if wait_ms elapses first (waiting never kills it). Its complete stdout and stderr are kept: read them with command_output, check on it with command_status or command_wait, stop it with command_kill. Every result carries counters {running, finished, queued} for this session: finished counts commands that have ended and not been read yet; queued counts commands waiting for a slot (group) or for their dependencies (after).

Limits: wait_ms at most 600000 (10 minutes); timeout_ms, max_output_bytes, max_memory_bytes and max_processes at most the policy's ceilings (0 or absent means the policy default). A command over its timeout gets SIGTERM, then SIGKILL; output beyond max_output_bytes per stream stops the command (state output_limit); a command over max_memory_bytes is killed by the kernel (state exited, signal SIGKILL, error says memory limit); beyond max_processes its forks fail. The memory and process limits need a policy with a cgroup.

Example: {"argv": ["go", "test", "./..."], "cwd": "service", "wait_ms": 30000} runs the tests; if they finish within 30 s the result is settled with exit_code and tail_preview, otherwise it is "running" and you can keep working.`,
			Annotations: Annotations{Destructive: true},
		},
		props: []prop{
			{name: "argv", typ: "array", required: true, minItems: 1, maxLen: maxArgv, stringToo: true,
				desc: `the command as an array of strings: the executable, then one element per argument, e.g. ["make", "test"]`},
			{name: "cwd", typ: "string", maxLen: maxPath,
				desc: "working directory; a relative path resolves against the sandbox root, absent means the root itself"},
			{name: "env", typ: "object", maxLen: maxEnv,
				desc: `environment variables; when given they REPLACE the whole environment (include PATH and HOME if the command needs them); absent inherits the server's environment`},
			{name: "timeout_ms", typ: "integer", min: 0, max: maxTimeoutMS,
				desc: "kill the command after this many milliseconds; 0 or absent means the policy default"},
			{name: "max_output_bytes", typ: "integer", min: 0, max: 1 << 50,
				desc: "cap on each of stdout and stderr in bytes; 0 or absent means the policy's cap"},
			{name: "max_memory_bytes", typ: "integer", min: 0, max: 1 << 50,
				desc: "memory limit of the command and all its processes in bytes; above it the kernel kills the command; 0 or absent means the policy's max_memory"},
			{name: "max_processes", typ: "integer", min: 0, max: policy.MaxProcessesCeiling,
				desc: "most processes (threads included) the command may have at once; a fork beyond it fails; 0 or absent means the policy's max_processes"},
			{name: "labels", typ: "object", maxLen: maxLabels,
				desc: `free-form string tags stored with the command, e.g. {"purpose": "unit tests"}`},
			{name: "wait_ms", typ: "integer", min: 0, max: maxWaitMS,
				desc: "wait up to this many milliseconds for the command to finish before returning; 0 or absent returns at once"},
			{name: "group", typ: "string", maxLen: 64,
				desc: `a group the policy defines, e.g. "tests": at most its max_running commands of the group run at once, the others wait in state "queued"`},
			{name: "after", typ: "array", maxLen: 64,
				desc: `task_ids of this session that must finish with exit code 0 first; the command waits in state "queued" and ends "dependency_failed", never started, if one of them fails`},
			{name: "priority", typ: "integer", min: -1000, max: 1000,
				desc: "queue order when the command has to wait: a higher priority starts first (default 0)"},
		},
		call: t.run,
	}
}

// policyNote describes the policy to the model: what may run and where.
func (t *Toolset) policyNote() string {
	p := t.r.Policy()
	if p == nil {
		return "No policy is configured on this server, so every start is refused until the operator configures one."
	}
	allowed := "no executables (every start is refused)"
	if len(p.AllowedExecutables) > 0 {
		allowed = "exactly these argv[0] values: " + quoteAll(p.AllowedExecutables)
	}
	return fmt.Sprintf("This server's policy allows %s. Working directories must be inside %s.", allowed, p.CwdRoot)
}

func (t *Toolset) run(ctx context.Context, raw json.RawMessage) (counted, error) {
	var a runArgs
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	argv, err := t.argv(ctx, a.Argv)
	if err != nil {
		return nil, err
	}
	if err := checkArgv(argv); err != nil {
		return nil, err
	}
	if err := checkLabels(a.Labels); err != nil {
		return nil, err
	}
	cwd := a.Cwd
	if t.cwdRoot != "" && !filepath.IsAbs(cwd) {
		cwd = filepath.Join(t.cwdRoot, cwd)
	}
	job, err := t.r.Start(ctx, argv, runner.StartOptions{
		Cwd: cwd, Env: a.Env, Session: t.session, Labels: a.Labels,
		Timeout:        time.Duration(a.TimeoutMS) * time.Millisecond,
		MaxOutputBytes: a.MaxOutputBytes,
		MaxMemory:      a.MaxMemoryBytes,
		MaxProcesses:   int(a.MaxProcesses),
		Group:          a.Group, After: a.After, Priority: int(a.Priority),
	})
	if err != nil {
		if job != nil {
			return nil, fmt.Errorf("start task %s: %w", job.ID, err)
		}
		return nil, err
	}
	var st *bgcmd.Status
	if a.WaitMS > 0 {
		st, err = t.r.Await(ctx, job.ID, time.Duration(a.WaitMS)*time.Millisecond)
		if err == nil {
			st, err = t.readSettled(ctx, st)
		}
	} else {
		st, err = t.r.Read(ctx, job.ID) // reads (and marks read) a command that already ended
	}
	if err != nil {
		return nil, fmt.Errorf("read the status of task %s: %w", job.ID, err)
	}
	return newStatus(st), nil
}

// argv decodes the argv argument. A single string is a shell line: it is
// refused as the policy refuses it as argv[0] (shell_syntax, with the
// split-it hint), and the refusal is recorded; any other string is the
// wrong shape.
func (t *Toolset) argv(ctx context.Context, raw json.RawMessage) ([]string, error) {
	var line string
	if json.Unmarshal(raw, &line) != nil {
		var argv []string
		if err := json.Unmarshal(raw, &argv); err != nil {
			return nil, invalid(`pass argv as an array of strings, e.g. ["make", "test"]`, "argv: %v", err)
		}
		return argv, nil
	}
	dec, err := policy.Check(t.r.Policy(), policy.Request{Argv: []string{line}})
	dec.Close() // only the refusal matters here; an allowed check holds the cwd open
	if ref, ok := policy.IsRefusal(err); ok && ref.Code == policy.CodeShellSyntax {
		// Start refuses it the same way, records the refusal for audit
		// and returns it.
		if _, err = t.r.Start(ctx, []string{line}, runner.StartOptions{Session: t.session}); err != nil {
			return nil, err
		}
	}
	return nil, invalid(fmt.Sprintf(`pass argv as an array of strings, e.g. [%q]`, line),
		"argv must be an array of strings, not the string %q", line)
}

// checkArgv bounds the total size of argv.
func checkArgv(argv []string) error {
	n := 0
	for _, a := range argv {
		n += len(a)
	}
	if n > maxArgBytes {
		return invalid("pass large inputs in a file the command reads instead of on the command line",
			"argv holds %d bytes, above the limit of %d", n, maxArgBytes)
	}
	return nil
}

// checkLabels bounds label keys and values, and refuses the labels the
// git tools own.
func checkLabels(labels map[string]string) error {
	for k, v := range labels {
		if bgcmd.ReservedLabel(k) {
			return invalid("use another key: kind, tool and display are set by bgcmd's git tools alone",
				"label %q is bgcmd's own", k)
		}
		if k == "" || len(k) > maxLabelSize || len(v) > maxLabelSize || strings.ContainsRune(k+v, 0) {
			return invalid(fmt.Sprintf("use non-empty keys and values of at most %d bytes, without NUL", maxLabelSize),
				"label %q is empty, too long or contains a NUL byte", k)
		}
	}
	return nil
}
