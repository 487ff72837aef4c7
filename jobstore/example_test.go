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
