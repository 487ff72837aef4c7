package runner

import (
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// spareDirsName is the folder of the home beside jobs/ that keeps emptied
// job directories for reuse. Creating and removing a directory costs a
// journal transaction each (a fraction of a millisecond to a few on a disk
// mounted with discard), a rename a few microseconds: an in-process
// runner moves a settled job's emptied directory here and the next start
// moves it back under the new job's id.
const spareDirsName = "jobs.spare"

// maxSpareDirs bounds the spare directories this process keeps per home;
// past it, a settled job's directory is removed.
const maxSpareDirs = 16

// spareDirs is this process's list of spare directories, by spare folder.
// A directory listed here may have been taken by another process sharing
// the home (the rename of the one who takes it first wins) or removed: a
// start that loses falls back to creating one.
var spareDirs = struct {
	sync.Mutex
	names   map[string][]string
	scanned map[string]bool
}{names: map[string][]string{}, scanned: map[string]bool{}}

// makeJobDir creates the directory dir of a new job, private to the owner:
// a spare directory renamed into place when there is one, else a new one.
// A spare may hold the exit record of an earlier job: a record names its
// job, and readExitRecord ignores one that names another (see exitRecord).
func makeJobDir(dir string) error {
	spare := filepath.Join(filepath.Dir(filepath.Dir(dir)), spareDirsName)
	for {
		name, ok := takeSpareName(spare)
		if !ok {
			break
		}
		if os.Rename(filepath.Join(spare, name), dir) == nil {
			return nil
		}
		// Taken by another process, or removed: try the next.
	}
	return os.MkdirAll(dir, 0o700)
}

// takeSpareName pops one spare directory name of the folder spare; the
// first call of a process for a folder lists it, adopting what a process
// that ended left there.
func takeSpareName(spare string) (string, bool) {
	spareDirs.Lock()
	defer spareDirs.Unlock()
	if !spareDirs.scanned[spare] {
		spareDirs.scanned[spare] = true
		if entries, err := os.ReadDir(spare); err == nil {
			known := map[string]bool{}
			for _, n := range spareDirs.names[spare] {
				known[n] = true
			}
			for _, e := range entries {
				if e.IsDir() && !known[e.Name()] && len(spareDirs.names[spare]) < maxSpareDirs {
					spareDirs.names[spare] = append(spareDirs.names[spare], e.Name())
				}
			}
		}
	}
	names := spareDirs.names[spare]
	if len(names) == 0 {
		return "", false
	}
	name := names[len(names)-1]
	spareDirs.names[spare] = names[:len(names)-1]
	return name, true
}

// recycleJobDir empties a settled job's directory and keeps it as a spare
// for the next start, or removes it when enough are kept. Its exit record
// is left in place (it names its job; the next job overwrites it in place
// rather than creating a file).
func recycleJobDir(dir string) {
	jobsDir := filepath.Dir(dir)
	spare := filepath.Join(filepath.Dir(jobsDir), spareDirsName)
	spareDirs.Lock()
	full := len(spareDirs.names[spare]) >= maxSpareDirs
	spareDirs.Unlock()
	if full || !emptyJobDir(dir) {
		removeJobDir(dir)
		return
	}
	name := jobstore.NewID()
	err := os.Rename(dir, filepath.Join(spare, name))
	if errors.Is(err, os.ErrNotExist) {
		if merr := os.Mkdir(spare, 0o700); merr == nil || errors.Is(merr, os.ErrExist) {
			err = os.Rename(dir, filepath.Join(spare, name))
		}
	}
	if err != nil {
		removeJobDir(dir)
		return
	}
	spareDirs.Lock()
	spareDirs.names[spare] = append(spareDirs.names[spare], name)
	spareDirs.Unlock()
}

// emptyJobDir removes every entry of dir but its exit record, and reports
// whether it succeeded.
func emptyJobDir(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Name() == exitRecordName && e.Type().IsRegular() {
			continue
		}
		if os.RemoveAll(filepath.Join(dir, e.Name())) != nil {
			return false
		}
	}
	return true
}
