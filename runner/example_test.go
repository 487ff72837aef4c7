package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// Example starts a command in the background, keeps working, then waits
// for it (boundedly) and reads its output back.
func Example() {
	ctx := context.Background()
	home, _ := os.MkdirTemp("", "bgcmd-example-")
	defer os.RemoveAll(home)

	r, err := runner.New(ctx, runner.Options{
		Home: home,
		Policy: &policy.Policy{
			AllowedExecutables: []string{"/usr/bin/printf"},
			CwdRoot:            home,
		},
	})
	if err != nil {
		panic(err)
	}
	defer r.Close(context.Background())

	job, err := r.Start(ctx, []string{"/usr/bin/printf", `built %s\n`, "ok"}, runner.StartOptions{Session: "docs"})
	if err != nil {
		panic(err)
	}
	fmt.Println("started:", job.State)

	// ... the caller keeps working; later:
	st, err := r.Await(ctx, job.ID, time.Minute)
	if err != nil {
		panic(err)
	}
	if st.Settled() {
		// Await only reads; Read takes the result in and marks the job read.
		if st, err = r.Read(ctx, job.ID); err != nil {
			panic(err)
		}
	}
	exit := "none, signal " + st.Signal // ExitCode is nil after a signal, timeout or kill
	if st.ExitCode != nil {
		exit = strconv.Itoa(*st.ExitCode)
	}
	fmt.Println("settled:", st.State, exit, st.Stdout.Bytes, "bytes")
	page, err := r.ReadOutput(ctx, job.ID, "stdout", artifacts.Page{Unit: artifacts.UnitLines})
	if err != nil {
		panic(err)
	}
	fmt.Print(page.Text)
	fmt.Printf("counters: %+v\n", st.Counters)
	// Output:
	// started: running
	// settled: exited 0 9 bytes
	// built ok
	// counters: {Running:0 Finished:0 Queued:0}
}

// ExampleRunner_Start_refused shows a policy refusal: no job is created, and
// the typed error says what was wrong and how to recover.
func ExampleRunner_Start_refused() {
	ctx := context.Background()
	home, _ := os.MkdirTemp("", "bgcmd-example-")
	defer os.RemoveAll(home)
	r, _ := runner.New(ctx, runner.Options{Home: home,
		Policy: &policy.Policy{AllowedExecutables: []string{"/usr/bin/make"}, CwdRoot: home}})

	_, err := r.Start(ctx, []string{"make test && make lint"}, runner.StartOptions{})
	var ref *policy.Refusal
	if errors.As(err, &ref) {
		fmt.Println(ref.Code)
	}
	// Output:
	// shell_syntax
}

// ExampleRunner_Kill stops a running command's whole process group; the job
// settles as killed and keeps what it printed.
func ExampleRunner_Kill() {
	ctx := context.Background()
	home, _ := os.MkdirTemp("", "bgcmd-example-")
	defer os.RemoveAll(home)
	r, _ := runner.New(ctx, runner.Options{Home: home,
		Policy: &policy.Policy{AllowedExecutables: []string{"/usr/bin/sleep"}, CwdRoot: home}})
	defer r.Close(context.Background())

	job, _ := r.Start(ctx, []string{"/usr/bin/sleep", "600"}, runner.StartOptions{})
	st, err := r.Kill(ctx, job.ID, syscall.SIGTERM)
	if err != nil {
		panic(err)
	}
	fmt.Println(st.State, st.Signal)
	// Output:
	// killed SIGTERM
}
