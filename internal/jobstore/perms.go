package jobstore

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// SecureDir checks that dir, the directory holding the database (bgcmd's
// home), is private to the user running bgcmd, as ssh checks ~/.ssh: the
// database holds every command line, and the logs beside it every byte of
// output.
//
// A missing dir is fine (the caller creates it 0700). A dir owned by
// another user, or one the group or others may write (they could replace
// the database or a log), is refused with an error saying how to fix it.
// A dir of ours that the group or others may only read or enter (0755, as
// `mkdir -p` makes it) is tightened to 0700: SecureDir then returns its
// previous permissions, so that the caller can say so; otherwise it
// returns 0.
func SecureDir(dir string) (os.FileMode, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("check home %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return 0, fmt.Errorf("check home %s: not a directory (use another --home)", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return 0, fmt.Errorf("home %s is owned by uid %d, not by you (uid %d): bgcmd keeps every command line "+
			"and its output there and refuses a directory another user controls; use a home of your own "+
			"(--home DIR or BGCMD_HOME), or as root: chown %d %s", dir, st.Uid, os.Geteuid(), os.Geteuid(), dir)
	}
	perm := fi.Mode().Perm()
	if perm&0o022 != 0 {
		return 0, fmt.Errorf("home %s is writable by other users (mode %04o): they could replace the database "+
			"or the logs, so bgcmd refuses it; fix it with: chmod 700 %s", dir, perm, dir)
	}
	if perm&0o077 == 0 {
		return 0, nil
	}
	if err := os.Chmod(dir, perm&0o700); err != nil {
		return 0, fmt.Errorf("home %s is open to other users (mode %04o) and bgcmd could not make it private: %w "+
			"(fix it with: chmod 700 %s)", dir, perm, err, dir)
	}
	return perm, nil
}

// privateFiles creates the database file 0600 when it is missing, so that
// SQLite, which gives the WAL and SHM files the database's mode, never
// makes any of them readable by others whatever the umask, and makes an
// existing database, WAL and SHM of ours private again.
func privateFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open store %s: %w (check the home is yours and writable)", path, err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := makePrivate(p); err != nil {
			return err
		}
	}
	return nil
}

// makePrivate removes the group and other permissions of path, if it exists.
func makePrivate(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, fi.Mode().Perm()&0o600); err != nil {
		return fmt.Errorf("open store: make %s private: %w (fix it with: chmod 600 %s)", path, err, path)
	}
	return nil
}
