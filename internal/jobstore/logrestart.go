package jobstore

import (
	"context"
	"fmt"
	"os"
)

// ReadyLog readies a SQLite store's write-ahead log for the processes
// that come after this one: it copies the log into the database (a
// passive checkpoint on the writer's connection, which waits for no
// reader) and says whether all of it was copied. When it was, this
// connection's next write starts the log again from its beginning, and
// pays for that start (a new header, fsynced) instead of the next
// process.
//
// It is for a short-lived process right before its last write (a detached
// supervisor of a `bgcmd run`, before its settle): after that write it
// may end without closing the store (see LogWithin), and the next
// process to write appends to a short log instead of starting an emptied
// one, which costs that process an fsync of the log and of its directory
// before its first commit. On PostgreSQL and on a read-only store it does
// nothing and says false.
func (s *Store) ReadyLog(ctx context.Context) (bool, error) {
	if s.d.postgres || s.readOnly {
		return false, nil
	}
	var busy, log, copied int64
	if err := s.w.QueryRowxContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &copied); err != nil {
		return false, fmt.Errorf("ready the write-ahead log: %w", err)
	}
	return busy == 0 && log >= 0 && copied == log, nil
}

// LogWithin says whether s's write-ahead log file is no larger than a log
// that starts again is cut back to (journal_size_limit): a process may
// then leave it to the next (see ReadyLog). False on PostgreSQL, and when
// the file cannot be read.
func LogWithin(s *Store) bool {
	if s.d.postgres {
		return false
	}
	fi, err := os.Stat(s.path + "-wal")
	return err == nil && fi.Size() <= walSizeLimit
}
