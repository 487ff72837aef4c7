package jobstore

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteCode returns the primary result code of the SQLite error in err's
// chain (sqlite3.SQLITE_FULL, say), or 0 when there is none.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// diskFull reports whether the database failed for want of space: SQLite
// says so as SQLITE_FULL, or as SQLITE_IOERR when the file system fails the
// write; PostgreSQL as disk_full (SQLSTATE 53100).
func diskFull(err error) bool {
	if pgCode(err) == pgDiskFull {
		return true
	}
	switch sqliteCode(err) {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR:
		return true
	}
	return false
}

// diskFullHint is what to do when diskFull says so.
const diskFullHint = "the disk is full or failing: free space under the bgcmd home and retry"

// describeWriteError says what to do about a write the database could not
// make because the disk is full, or (PostgreSQL) because another process
// held the store's write lock past the busy timeout.
func describeWriteError(err error) error {
	if diskFull(err) {
		return fmt.Errorf("%w (%s)", err, diskFullHint)
	}
	if pgCode(err) == pgLockNotAvailable {
		return fmt.Errorf("%w (another bgcmd process held the store's write lock for longer than the busy timeout: retry; if it recurs, look for a stuck bgcmd process on a host sharing the database)", err)
	}
	return err
}

// describeOpenError names the path and says how to recover from the usual
// reasons a database cannot be opened.
func describeOpenError(path string, err error) error {
	switch {
	case sqliteCode(err) == sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("open store %s: not a SQLite database (move the file aside or use another --home): %w", path, err)
	case diskFull(err):
		return fmt.Errorf("open store %s: cannot write: %s: %w", path, diskFullHint, err)
	case sqliteCode(err) == sqlite3.SQLITE_CANTOPEN:
		return fmt.Errorf("open store %s: cannot open the file (check the directory exists and is writable): %w", path, err)
	}
	return fmt.Errorf("open store %s: %w", path, err)
}
