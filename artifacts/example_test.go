package artifacts_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bgcmd/bgcmd/artifacts"
)

// A runner captures a stream, readers page it while the job runs, and the
// settled log is banked and read from the store.
func Example() {
	home, err := os.MkdirTemp("", "bgcmd-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	logPath := filepath.Join(home, "stdout.log")

	c, err := artifacts.NewCapture(artifacts.CaptureOptions{Path: logPath, Cap: 1 << 20})
	if err != nil {
		panic(err)
	}
	fmt.Fprint(c, "compiling…\nok  pkg/a\nFAIL pkg/b: 期待 1, got 2\nok  pkg/c\n")

	// While the job runs: the last two lines.
	live := artifacts.Source{Path: logPath}
	page, err := artifacts.Read(live, artifacts.Page{Tail: 2})
	if err != nil {
		panic(err)
	}
	fmt.Printf("tail from line %d, has more: %v\n%s", page.Offset, page.HasMore, page.Text)

	if err := c.Close(); err != nil {
		panic(err)
	}
	sum := c.Summary()
	store := &artifacts.Store{Dir: filepath.Join(home, "artifacts")}
	sum, artifact, err := store.Bank(logPath, &sum)
	if err != nil {
		panic(err)
	}
	fmt.Printf("banked %d bytes, %d chars, %d lines\n", sum.Bytes, sum.Chars, sum.Lines)

	final := artifacts.Source{Path: artifact, Final: true}
	page, err = artifacts.Read(final, artifacts.Page{Grep: `^FAIL`})
	if err != nil {
		panic(err)
	}
	for _, m := range page.Matches {
		fmt.Printf("%d: %s\n", m.Line, m.Text)
	}
	page, err = artifacts.Read(final, artifacts.Page{Unit: artifacts.UnitChars, Offset: 8, Limit: 4})
	if err != nil {
		panic(err)
	}
	fmt.Printf("chars 8-11: %q, next %d of %d\n", page.Text, page.NextOffset, page.TotalSize)
	// Output:
	// tail from line 2, has more: true
	// FAIL pkg/b: 期待 1, got 2
	// ok  pkg/c
	// banked 61 bytes, 55 chars, 4 lines
	// 3: FAIL pkg/b: 期待 1, got 2
	// chars 8-11: "g…\no", next 12 of 55
}

// A supervisor's pump: the capture reads a command's pipe itself, straight
// into the buffers it hashes, until the command closes it.
func ExampleCapture_ReadFrom() {
	dir, err := os.MkdirTemp("", "bgcmd-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	c, err := artifacts.NewCapture(artifacts.CaptureOptions{Path: filepath.Join(dir, "stdout.log"), Cap: 10})
	if err != nil {
		panic(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	go func() {
		fmt.Fprint(pw, "line one\nline two\n")
		pw.Close()
	}()
	n, err := c.ReadFrom(pr)
	pr.Close()
	fmt.Println(n, err, c.Err()) // the cap is not a write error
	if err := c.Close(); err != nil {
		panic(err)
	}
	fmt.Printf("%d bytes, capped: %v\n", c.Summary().Bytes, c.Summary().Capped)
	// Output:
	// 10 output cap reached <nil>
	// 10 bytes, capped: true
}
