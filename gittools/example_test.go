package gittools_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/bgcmd/bgcmd/gittools"
	"github.com/bgcmd/bgcmd/runner"
)

// exampleRepo makes a repository with one commit in dir.
func exampleRepo(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("hello\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "README.md"}, {"commit", "-q", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, testEnv(dir)
		if err := cmd.Run(); err != nil {
			return err
		}
	}
	return nil
}

// A host opens a store, makes a Toolset over a repository and calls the
// tools with typed values; a value that could become an option is refused
// before git runs.
func Example() {
	ctx := context.Background()
	repo, _ := os.MkdirTemp("", "gittools-repo")
	home, _ := os.MkdirTemp("", "gittools-home")
	defer os.RemoveAll(repo)
	defer os.RemoveAll(home)
	if err := exampleRepo(repo); err != nil {
		fmt.Println(err)
		return
	}

	ts, err := gittools.New(context.Background(), gittools.Options{Repo: repo, Runner: runner.Options{Home: home}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ts.Close(context.Background())

	res, err := ts.LsFiles(ctx, gittools.LsFilesArgs{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.Status.State, " ", res.Output)

	_, err = ts.Log(ctx, gittools.LogArgs{Ref: "--output=/tmp/x"})
	var ae *gittools.ArgError
	if errors.As(err, &ae) {
		fmt.Println(ae.Field, "refused:", ae.Reason)
	}
	// Output:
	// exited README.md
	// ref refused: begins with '-', which git would read as an option
}
