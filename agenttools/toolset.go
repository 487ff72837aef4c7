package agenttools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/gittools"
	"github.com/bgcmd/bgcmd/runner"
)

// MaxWait bounds every wait a tool call makes (run_command_bg's wait_ms,
// command_wait's timeout_ms): a model that wants to wait longer calls
// command_wait again.
const MaxWait = 10 * time.Minute

// Options configure New.
type Options struct {
	// Runner starts and supervises the commands (required). Its policy
	// decides what may run; a runner without a policy refuses every start.
	Runner *runner.Runner
	// Git, when set, adds the six read-only git tools over its repository.
	Git *gittools.Toolset
	// Session groups the commands this toolset starts and is the session
	// whose counters every result carries; default "default".
	Session string
	// CwdRoot is the directory a relative (or empty) cwd of run_command_bg
	// resolves against; "" leaves that to the runner's policy, which
	// resolves it against its cwd_root. The result must still lie inside
	// the policy's root.
	CwdRoot string
}

// Toolset is the agent tools over one runner and session. It is safe for
// concurrent use; it owns nothing that needs closing.
type Toolset struct {
	r       *runner.Runner
	git     *gittools.Toolset
	session string
	cwdRoot string
	defs    []*def
	byName  map[string]*def
}

// New makes a Toolset. It fails when Runner is nil or CwdRoot is not an
// absolute path.
func New(opts Options) (*Toolset, error) {
	if opts.Runner == nil {
		return nil, errors.New("new agent toolset: nil runner")
	}
	if opts.CwdRoot != "" && !filepath.IsAbs(opts.CwdRoot) {
		return nil, fmt.Errorf("new agent toolset: cwd root %q is not an absolute path", opts.CwdRoot)
	}
	if opts.Session == "" {
		opts.Session = "default"
	}
	t := &Toolset{r: opts.Runner, git: opts.Git, session: opts.Session,
		cwdRoot: opts.CwdRoot, byName: map[string]*def{}}
	t.defs = append(t.defs, t.runDef(), t.statusDef(), t.outputDef(), t.waitDef(),
		t.killDef(), t.listDef(), t.exportDef(), t.rerunDef())
	if t.git != nil {
		t.defs = append(t.defs, t.gitDefs()...)
	}
	for _, d := range t.defs {
		d.InputSchema = d.schema()
		t.byName[d.Name] = d
	}
	return t, nil
}

// Session returns the session whose counters every result carries.
func (t *Toolset) Session() string { return t.session }

// Tools lists the tools in a stable order: the seven command tools, then the
// git tools when configured. The slice and the schemas are copies the
// caller may keep.
func (t *Toolset) Tools() []Tool {
	out := make([]Tool, len(t.defs))
	for i, d := range t.defs {
		out[i] = d.Tool
		out[i].InputSchema = slices.Clone(d.InputSchema)
	}
	return out
}

// Call runs the tool name with its raw JSON arguments (an object; empty or
// null means no arguments). Everything the caller or the model can get
// wrong, and every failure of the command machinery, comes back as a Result
// with IsError set; the returned error is non-nil only when ctx ended
// before the call finished, in which case no Result is meaningful.
func (t *Toolset) Call(ctx context.Context, name string, args json.RawMessage) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = t.fail(ctx, &ToolError{Code: CodeInternal,
				Message: fmt.Sprintf("the %s tool crashed: %v", name, p),
				Hint:    "this is a bug in bgcmd, not in your arguments; tell the operator, with this message"}), nil
		}
	}()
	d, ok := t.byName[name]
	if !ok {
		return t.fail(ctx, unknownTool(name, t.names())), nil
	}
	raw, terr := d.check(args)
	if terr != nil {
		return t.fail(ctx, terr), nil
	}
	v, err := d.call(ctx, raw)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: %w", name, ctx.Err())
	}
	if err != nil {
		return t.fail(ctx, classify(err)), nil
	}
	c, err := t.counters(ctx)
	if err != nil {
		return t.fail(ctx, classify(err)), nil
	}
	v.setCounters(c)
	if res, err = newResult(v, false, ""); err != nil {
		return t.fail(ctx, classify(err)), nil
	}
	return res, nil
}

// counters reads the session's counters.
func (t *Toolset) counters(ctx context.Context) (bgcmd.Counters, error) {
	c, err := t.r.Counters(ctx, t.session)
	if err != nil {
		return c, fmt.Errorf("read the session's counters: %w", err)
	}
	return c, nil
}

// fail builds the tool error result for te, with the counters when they
// can be read.
func (t *Toolset) fail(ctx context.Context, te *ToolError) *Result {
	v := &ErrorResult{Error: te}
	if c, err := t.counters(ctx); err == nil {
		v.Counters = c
	}
	res, err := newResult(v, true, te.Text())
	if err != nil {
		// An ErrorResult is strings and ints: marshaling it cannot fail.
		panic(err)
	}
	return res
}

// names lists the tool names in order.
func (t *Toolset) names() []string {
	out := make([]string, len(t.defs))
	for i, d := range t.defs {
		out[i] = d.Name
	}
	return out
}

// newResult marshals v into a Result. A success's Text is the same JSON.
func newResult(v counted, isError bool, text string) (*Result, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // a model reads "&&", not "\u0026\u0026"
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode tool result: %w", err)
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if !isError {
		text = string(b)
	}
	return &Result{Value: v, Structured: b, IsError: isError, Text: text}, nil
}
