package runner_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// exampleRunner opens an in-process runner (and its store) in a temporary home
// that allows /usr/bin/printf and /usr/bin/sleep.
func exampleRunner(ctx context.Context) (r *runner.Runner, done func()) {
	home, _ := os.MkdirTemp("", "bgcmd-example-")
	r, err := runner.New(ctx, runner.Options{Home: home, Policy: &policy.Policy{
		AllowedExecutables: []string{"/usr/bin/printf", "/usr/bin/sleep"}, CwdRoot: home}})
	if err != nil {
		panic(err)
	}
	return r, func() { r.Close(context.Background()); os.RemoveAll(home) }
}

// ExampleRunner_Events subscribes to the settles of a session: the
// channel delivers each job's terminal transition as it is committed, by
// this process or any other sharing the store. Remember e.Seq and pass it
// as After to resume without gaps.
func ExampleRunner_Events() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, done := exampleRunner(ctx)
	defer done()

	events, err := r.Events(ctx, runner.EventFilter{Session: "docs", Settled: true, After: -1})
	if err != nil {
		panic(err)
	}
	job, err := r.Start(ctx, []string{"/usr/bin/printf", "built\n"}, runner.StartOptions{Session: "docs"})
	if err != nil {
		panic(err)
	}
	e := <-events
	exit := "none" // ExitCode is nil after a signal, timeout or kill
	if e.ExitCode != nil {
		exit = strconv.Itoa(*e.ExitCode)
	}
	fmt.Println(e.JobID == job.ID, e.From, "->", e.To, "exit", exit)
	// Output: true running -> exited exit 0
}

// ExampleRunner_AwaitAny waits for the first of several jobs to settle.
func ExampleRunner_AwaitAny() {
	ctx := context.Background()
	r, done := exampleRunner(ctx)
	defer done()

	slow, err := r.Start(ctx, []string{"/usr/bin/sleep", "30"}, runner.StartOptions{})
	if err != nil {
		panic(err)
	}
	quick, err := r.Start(ctx, []string{"/usr/bin/printf", "done\n"}, runner.StartOptions{})
	if err != nil {
		panic(err)
	}
	first, err := r.AwaitAny(ctx, []string{slow.ID, quick.ID}, time.Minute)
	if err != nil {
		panic(err)
	}
	fmt.Println(first.ID == quick.ID, first.State)
	if _, err := r.Kill(ctx, slow.ID, 0); err != nil {
		panic(err)
	}
	// Output: true exited
}
