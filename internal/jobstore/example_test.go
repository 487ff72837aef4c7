package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// Example records a job's life by hand — what the runner does for every
// job — and reads the history and counters back, as audit tooling would.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "bgcmd-example-")
	defer os.RemoveAll(dir)
	s, err := jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(dir, "bgcmd.db")})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	j := &bgcmd.Job{Session: "ci", Argv: []string{"/usr/bin/make", "test"}, Exe: "/usr/bin/make", Cwd: "/src"}
	if err := s.Create(ctx, j); err != nil {
		panic(err)
	}
	code := 2
	if _, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code}); err != nil {
		panic(err)
	}
	// A second settle is refused: a settled job never changes.
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateKilled})
	fmt.Println(errors.Is(err, bgcmd.ErrInvalidTransition))

	c, _ := s.Counters(ctx, "ci")
	fmt.Printf("%+v\n", c)
	page, _ := s.List(ctx, jobstore.ListParams{Session: "ci", Unread: true})
	for _, got := range page.Jobs {
		fmt.Println(got.Argv, got.State, *got.ExitCode)
	}
	s.MarkSeen(ctx, j.ID)
	c, _ = s.Counters(ctx, "ci")
	fmt.Printf("%+v\n", c)
	// Output:
	// true
	// {Running:0 Finished:1 Queued:0}
	// [/usr/bin/make test] exited 2
	// {Running:0 Finished:0 Queued:0}
}
