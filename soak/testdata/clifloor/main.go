// Command clifloor is the floor BenchmarkCLIRun sets beside `bgcmd run --
// /bin/true`: the same processes and the same durable write, with no bgcmd
// code. It inserts one row into a SQLite file in WAL mode with
// synchronous=NORMAL (bgcmd's regime), in one immediate transaction; then it
// starts a second process (itself re-executed, as bgcmd starts a detached
// supervisor), which starts the command and reports on a pipe once it runs;
// the first process prints the row's id and the second process's pid (which
// outlives it until the command ends) and exits on that report. The second
// process is the program named as this one with "-child" appended, when
// there is one (the linked floor's, whose second program links what
// bgcmd-supervisor links), else this one.
//
// Usage: clifloor DB ARGV... (the second process is clifloor -child ARGV...).
package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	_ "modernc.org/sqlite"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "-child" {
		child(os.Args[2:])
		return
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: clifloor DB ARGV...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "clifloor:", err)
		os.Exit(1)
	}
}

func run(path string, argv []string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, argv TEXT NOT NULL, created_at TEXT NOT NULL)`); err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.Exec(`INSERT INTO jobs (argv, created_at) VALUES (?, ?)`, fmt.Sprint(argv), time.Now().UTC().Format(time.RFC3339Nano))
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	id, _ := res.LastInsertId()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// A second program beside this one, when there is one, as bgcmd starts
	// its supervisor from bgcmd-supervisor.
	if _, err := os.Stat(self + "-child"); err == nil {
		self += "-child"
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, append([]string{"-child"}, argv...)...)
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	w.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || line != "ok\n" {
		return fmt.Errorf("child reported %q: %v", line, err)
	}
	fmt.Println(id, cmd.Process.Pid)
	return nil
}

// child starts argv, reports on descriptor 3 once it runs, and waits for it.
func child(argv []string) {
	report := os.NewFile(3, "report")
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(report, "error:", err)
		os.Exit(1)
	}
	fmt.Fprintln(report, "ok")
	report.Close()
	_ = cmd.Wait()
}
