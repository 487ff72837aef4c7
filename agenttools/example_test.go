package agenttools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"

	"github.com/bgcmd/bgcmd/agenttools"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// newExampleToolset opens a runner in a temporary home and a toolset whose
// policy allows /bin/echo. A real host keeps one runner and toolset
// for its lifetime; cleanup closes and removes them.
func newExampleToolset() (ts *agenttools.Toolset, cleanup func()) {
	ctx := context.Background()
	home, err := os.MkdirTemp("", "bgcmd-example-")
	if err != nil {
		log.Fatal(err)
	}
	pol := &policy.Policy{AllowedExecutables: []string{"/bin/echo"}, CwdRoot: home}
	// In-process supervision; set Detached (and call runner.MaybeSupervise
	// at the top of main) for commands that outlive the host.
	r, err := runner.New(ctx, runner.Options{Home: home, Policy: pol})
	if err != nil {
		log.Fatal(err)
	}
	ts, err = agenttools.New(agenttools.Options{Runner: r, Session: "agent-1"})
	if err != nil {
		log.Fatal(err)
	}
	return ts, func() {
		r.Close(context.Background())
		os.RemoveAll(home)
	}
}

// A Go agent server gives the tools to its own LLM loop: it lists them for
// the model once, passes every tool call the model makes to Call with the
// raw JSON arguments, and hands the Result's Text back to the model. A
// mistake the model makes comes back as a tool error it can correct.
func Example() {
	ts, cleanup := newExampleToolset()
	defer cleanup()
	ctx := context.Background()

	// 1. Describe the tools to the model: name, description, JSON schema.
	for _, t := range ts.Tools() {
		fmt.Printf("%s (read-only: %v)\n", t.Name, t.Annotations.ReadOnly)
	}

	// 2. The model's tool calls, as they would come out of the LLM.
	calls := []struct {
		name string
		args json.RawMessage
	}{
		{"run_command_bg", json.RawMessage(`{"argv": "echo hello"}`)},
		{"run_command_bg", json.RawMessage(`{"argv": ["/bin/echo", "hello"], "wait_ms": 60000}`)},
	}
	for _, c := range calls {
		res, err := ts.Call(ctx, c.name, c.args)
		if err != nil {
			log.Fatal(err) // only a cancelled context gets here
		}
		// 3. Give res.Text (JSON for a success) back to the model.
		if res.IsError {
			fmt.Println(strings.SplitN(res.Text, "\n", 2)[0])
			continue
		}
		st := res.Value.(*agenttools.Status)
		exit := "none" // ExitCode is nil after a signal, timeout or kill
		if st.ExitCode != nil {
			exit = strconv.Itoa(*st.ExitCode)
		}
		fmt.Printf("%s exit_code=%s preview=%q counters=%+v\n", st.State, exit, st.TailPreview, st.Counters)
	}
	// Output:
	// run_command_bg (read-only: false)
	// command_status (read-only: true)
	// command_output (read-only: true)
	// command_wait (read-only: true)
	// command_kill (read-only: false)
	// command_list (read-only: true)
	// command_export (read-only: false)
	// command_rerun (read-only: false)
	// refused (shell_syntax): argv is not a shell line: argv[0] "echo hello" contains whitespace (' '); it must be exactly one allowlisted executable
	// exited exit_code=0 preview="hello\n" counters={Running:0 Finished:0 Queued:0}
}

// A tool error's Text names the reason and the recovery step; its Value
// holds the same as a code, a message and a hint.
func ExampleToolset_Call_toolError() {
	ts, cleanup := newExampleToolset()
	defer cleanup()

	res, _ := ts.Call(context.Background(), "command_status", json.RawMessage(`{"task_id": 42}`))
	fmt.Println(res.IsError)
	fmt.Println(res.Text)
	fmt.Println(res.Value.(*agenttools.ErrorResult).Error.Code)
	// Output:
	// true
	// error (invalid_arguments): argument "task_id" must be a string, not a number
	// To recover: pass task_id as a string: the task_id run_command_bg returned, e.g. "0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c"
	// invalid_arguments
}

// Output is read in pages: follow next_offset while has_more is true.
// Reading a command that has ended clears it from the finished counter.
func ExampleToolset_Call_output() {
	ts, cleanup := newExampleToolset()
	defer cleanup()
	ctx := context.Background()

	res, _ := ts.Call(ctx, "run_command_bg", json.RawMessage(`{"argv": ["/bin/echo", "one", "two", "three"], "wait_ms": 60000}`))
	id := res.Value.(*agenttools.Status).TaskID

	offset := int64(0)
	for {
		args, _ := json.Marshal(map[string]any{"task_id": id, "stream": "stdout", "offset": offset, "limit": 8})
		res, _ := ts.Call(ctx, "command_output", args)
		page := res.Value.(*agenttools.OutputPage)
		fmt.Printf("%q next_offset=%d has_more=%v\n", *page.Text, page.NextOffset, page.HasMore)
		if !page.HasMore {
			break
		}
		offset = page.NextOffset
	}
	// Output:
	// "one two " next_offset=8 has_more=true
	// "three\n" next_offset=14 has_more=false
}
