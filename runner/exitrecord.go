package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/atomicfile"
)

// exitRecordName is the file a supervisor writes in the job directory when
// the child has ended, before it writes the terminal row. Reconcile settles a
// job from it when the supervisor died between the two.
const exitRecordName = "exit.json"

// exitRecord is the outcome of a job as the supervisor saw it. JobID names
// the job: a job directory reused for a later job may still hold an
// earlier job's record, which readExitRecord then ignores.
type exitRecord struct {
	JobID      string                              `json:"job_id,omitempty"`
	State      bgcmd.State                         `json:"state"`
	ExitCode   *int                                `json:"exit_code,omitempty"`
	Signal     string                              `json:"signal,omitempty"`
	Error      string                              `json:"error,omitempty"`
	FinishedAt time.Time                           `json:"finished_at"`
	Detail     map[string]any                      `json:"detail,omitempty"`
	Streams    map[bgcmd.Stream]*artifacts.Summary `json:"streams,omitempty"`
	Usage      *bgcmd.Usage                        `json:"usage,omitempty"`
}

// writeExitRecord writes rec atomically: a temp file, fsync, rename, fsync
// of the directory.
func writeExitRecord(dir string, rec *exitRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode exit record: %w", err)
	}
	return atomicfile.Write(filepath.Join(dir, exitRecordName), b)
}

// writeExitRecordUnsynced writes rec without waiting for the disk: one
// write, no fsync, and no new file when the directory already holds a
// record (a reused job directory): that file is overwritten in place, the
// rest of it blanked with spaces, since creating a file costs a journal
// transaction. A supervisor writes its record this way.
// The record only has to outlive the supervisor's process, whose settle
// transaction follows at once: with synchronous=NORMAL that commit is
// durable against a crash of the process, not against a power loss, and so
// is a file in the page cache. A power loss that tears the record loses
// only a status whose settle the database could have lost as well (reconcile
// takes a torn record for none and settles the job as orphaned). A
// supervisor dying mid-write leaves the same torn record.
func writeExitRecordUnsynced(dir string, rec *exitRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode exit record: %w", err)
	}
	path := filepath.Join(dir, exitRecordName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > int64(len(b)) {
		b = append(b, bytes.Repeat([]byte{' '}, int(fi.Size())-len(b))...)
	}
	_, err = f.WriteAt(b, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readExitRecord returns the job's exit record, or nil when there is none:
// no file, or one that names another job (the directory was reused).
func readExitRecord(dir string) (*exitRecord, error) {
	b, err := os.ReadFile(filepath.Join(dir, exitRecordName))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read exit record: %w", err)
	}
	var rec exitRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("decode exit record %s: %w", filepath.Join(dir, exitRecordName), err)
	}
	if rec.JobID != "" && rec.JobID != filepath.Base(dir) {
		return nil, nil // an earlier job's, in a reused directory
	}
	return &rec, nil
}
