package runner_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// ExampleRunner_AwaitOutput waits for a line of output rather than for the
// command to end: how a host waits for a dev server to say it is listening.
func ExampleRunner_AwaitOutput() {
	ctx := context.Background()
	home, err := os.MkdirTemp("", "bgcmd-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	r, err := runner.New(ctx, runner.Options{Home: home,
		Policy: &policy.Policy{AllowedExecutables: []string{"/usr/bin/printf"}, CwdRoot: home}})
	if err != nil {
		panic(err)
	}
	defer r.Close(context.Background())

	job, err := r.Start(ctx, []string{"/usr/bin/printf", `starting\nready on %s\n`, "8080"}, runner.StartOptions{})
	if err != nil {
		panic(err)
	}
	m, err := r.AwaitOutput(ctx, job.ID, runner.OutputWait{
		Pattern: regexp.MustCompile(`ready on (\d+)`), MaxWait: time.Minute})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %s line %d: %q\n", m.Outcome, m.Stream, m.Line, m.Text)
	// Output:
	// matched: stdout line 2: "ready on 8080"
}
