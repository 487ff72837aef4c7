package jobstore_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/bgcmd/bgcmd/jobstore"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// Example reads a home's history as audit tooling does: a runner records a
// failed command, then a Reader lists the unread failures, counts them
// and asks the failures_by_exe view which executable fails.
func Example() {
	ctx := context.Background()
	home, _ := os.MkdirTemp("", "bgcmd-example-")
	defer os.RemoveAll(home)

	r, err := runner.New(ctx, runner.Options{Home: home,
		Policy: &policy.Policy{AllowedExecutables: []string{"/usr/bin/false"}, CwdRoot: home}})
	if err != nil {
		panic(err)
	}
	job, err := r.Start(ctx, []string{"/usr/bin/false"}, runner.StartOptions{Session: "ci"})
	if err != nil {
		panic(err)
	}
	if _, err := r.Await(ctx, job.ID, time.Minute); err != nil {
		panic(err)
	}
	r.Close(ctx)

	rd, err := jobstore.Open(ctx, home)
	if err != nil {
		panic(err)
	}
	defer rd.Close()
	page, _ := rd.List(ctx, jobstore.ListParams{Session: "ci", Unread: true})
	for _, j := range page.Jobs {
		fmt.Println(j.Argv, j.State, *j.ExitCode)
	}
	c, _ := rd.Counters(ctx, "ci")
	fmt.Printf("%+v\n", c)
	err = rd.Query(ctx, `SELECT exe, jobs, failures FROM failures_by_exe`,
		func([]string) error { return nil },
		func(row jobstore.QueryRow) error {
			fmt.Println(row...)
			return nil
		})
	if err != nil {
		panic(err)
	}
	// Output:
	// [/usr/bin/false] exited 1
	// {Running:0 Finished:1 Queued:0}
	// /usr/bin/false 1 1
}

// ExampleReader_EventsPage polls one session's settles, as an audit tool
// following a host does: each poll resumes from the page's next, past the
// events it skipped (the job's start, another session's jobs), so a poll
// reads only what is new.
func ExampleReader_EventsPage() {
	ctx := context.Background()
	home, _ := os.MkdirTemp("", "bgcmd-example-")
	defer os.RemoveAll(home)

	r, err := runner.New(ctx, runner.Options{Home: home,
		Policy: &policy.Policy{AllowedExecutables: []string{"/usr/bin/true", "/usr/bin/false"}, CwdRoot: home}})
	if err != nil {
		panic(err)
	}
	defer r.Close(ctx)
	rd, err := jobstore.Open(ctx, home)
	if err != nil {
		panic(err)
	}
	defer rd.Close()

	var after int64
	poll := func() {
		page, next, err := rd.EventsPage(ctx, jobstore.EventsParams{Session: "ci", Settled: true, After: after})
		if err != nil {
			panic(err)
		}
		for _, ev := range page {
			fmt.Println(ev.Session, ev.To, *ev.ExitCode)
		}
		after = next
	}
	for _, argv := range [][]string{{"/usr/bin/true"}, {"/usr/bin/false"}} {
		for _, session := range []string{"ci", "scratch"} {
			job, err := r.Start(ctx, argv, runner.StartOptions{Session: session})
			if err != nil {
				panic(err)
			}
			if _, err := r.Await(ctx, job.ID, time.Minute); err != nil {
				panic(err)
			}
		}
		poll()
	}
	poll() // nothing new
	// Output:
	// ci exited 0
	// ci exited 1
}
