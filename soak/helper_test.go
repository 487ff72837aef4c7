package soak

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"time"

	_ "modernc.org/sqlite" // the driver the helper locks the database with
)

// helperEnv names the helper a re-executed test binary should be.
const helperEnv = "BGCMD_SOAK_HELPER"

// helperMain runs the helper the environment asks for and reports whether
// it did (the process then exits).
func helperMain() bool {
	switch os.Getenv(helperEnv) {
	case "":
		return false
	case "lockdb":
		if err := lockDB(os.Getenv("BGCMD_SOAK_DB"), os.Getenv("BGCMD_SOAK_HOLD")); err != nil {
			fmt.Fprintln(os.Stderr, "lockdb:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
	os.Exit(2)
	return true
}

// lockDB is another process holding the write lock of a bgcmd database: it
// opens the file, takes BEGIN IMMEDIATE, says "locked", holds the lock for
// hold (or until its stdin closes, when hold is empty), commits, and says
// "released <unix nanoseconds>".
func lockDB(path, hold string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)")
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	fmt.Println("locked")
	if hold != "" {
		d, err := time.ParseDuration(hold)
		if err != nil {
			return err
		}
		time.Sleep(d) // the fault itself: hold the lock this long
	} else {
		_, _ = io.Copy(io.Discard, os.Stdin)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	fmt.Printf("released %d\n", time.Now().UnixNano())
	return nil
}
