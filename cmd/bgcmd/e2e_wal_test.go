package main

import (
	"bytes"
	endian "encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunsOneAtATimeKeepTheLogBounded: `bgcmd run` after `bgcmd run`, each
// left alone until its supervisor has ended, keeps the store's write-ahead
// log bounded. The CLI leaves its connections to the end of its process,
// and so does the supervisor of its job: a process that opens the store
// after every connection ended rebuilds the log's index from its frames
// and counts none of them as copied, so the log would grow by every run
// (each open reading all of it) did the supervisor not copy the log into
// the database while its job runs, which makes its settle, the next
// write, start the log again from its beginning (runner.Options.Transient).
//
// Each job waits for a gate the test opens once its run has exited, so
// that its supervisor is the last to write, as it is for any job that
// outlives its CLI.
func TestRunsOneAtATimeKeepTheLogBounded(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	const bound = 128 // pages: a few runs' writes; eight runs write more
	wal := filepath.Join(h.dir, "bgcmd.db-wal")
	for i := range 8 {
		gate := filepath.Join(h.root, "gate-"+strconv.Itoa(i))
		var job struct {
			ID            string `json:"id"`
			SupervisorPID int    `json:"supervisor_pid"`
		}
		require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "run", "--", fixture(t, "wait-for-file.sh"), gate)), &job))
		require.NotZero(t, job.SupervisorPID, "run %d: %+v", i, job)
		require.NoError(t, os.WriteFile(gate, nil, 0o600)) // the run has exited
		eventually(t, "the supervisor to end", func() bool { return isZombie(job.SupervisorPID) })
		require.Less(t, walFrames(t, wal), bound, "after run %d the log was left holding every run's writes, never started again", i)
	}
	require.Equal(t, "settled\n8\n", h.ok("sql", "--csv", "SELECT COUNT(*) AS settled FROM jobs WHERE state = 'exited'"),
		"every run settled, and what the log held reached the database")
}

// TestARunAppendsToTheLogItsLastSupervisorLeft: the supervisor of a `bgcmd
// run` ends with its settle in the write-ahead log, the log started again
// by that settle, and the next run's CLI appends its row to that log
// instead of starting it again, which would fsync the log and the home
// before the CLI could answer. So does a run started while another run's
// job still runs: its supervisor copies the log only right before its
// settle. The log's header says which: its salt changes each time the log
// starts again. What the log holds reaches every reader all the same: the
// next process recovers it.
func TestARunAppendsToTheLogItsLastSupervisorLeft(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	wal := filepath.Join(h.dir, "bgcmd.db-wal")
	var ids []string
	run := func(gate string) (supervisorPID int) {
		var job struct {
			ID            string `json:"id"`
			SupervisorPID int    `json:"supervisor_pid"`
		}
		require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "run", "--", fixture(t, "wait-for-file.sh"), gate)), &job))
		require.NotZero(t, job.SupervisorPID, "%+v", job)
		ids = append(ids, job.ID)
		return job.SupervisorPID
	}
	gate := func(i int) string { return filepath.Join(h.root, "gate-"+strconv.Itoa(i)) }
	open := func(i int, supervisorPID int) {
		require.NoError(t, os.WriteFile(gate(i), nil, 0o600))
		eventually(t, "supervisor "+strconv.Itoa(i)+" to end", func() bool { return isZombie(supervisorPID) })
	}

	open(1, run(gate(1)))
	left := walSalt(t, wal)
	require.Positive(t, walFrames(t, wal), "the first supervisor emptied the log at its end instead of leaving its settle there")

	sup2 := run(gate(2))
	require.Equal(t, left, walSalt(t, wal), "the second run's CLI started the log again instead of appending to it")
	sup3 := run(gate(3))
	require.Equal(t, left, walSalt(t, wal), "the third run's CLI, while the second run's job runs, started the log again")

	open(2, sup2)
	require.NotEqual(t, left, walSalt(t, wal), "the second supervisor's settle did not start the log again after its checkpoint")
	open(3, sup3)
	for _, id := range ids {
		require.Equal(t, "exited", h.status(id)["state"], "job %s, read back through the log left behind", id)
	}
}

// The layout of a SQLite write-ahead log (sqlite.org/fileformat.html):
// a header, then frames, each a header and a page. The header's salts
// change each time the log starts again; a frame of the log as it is now
// carries the same salts, and the frames after the last such one, left
// from before the log started again, are not read.
const (
	walHeaderSize   = 32
	walFrameHeader  = 24
	walSaltAt       = 16
	walFrameSaltAt  = 8
	walPageSizeAt   = 8
	walSaltsByteLen = 8
)

// walSalt returns the salts of the write-ahead log at path.
func walSalt(t *testing.T, path string) [walSaltsByteLen]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(b), walHeaderSize, "the log has no header")
	return [walSaltsByteLen]byte(b[walSaltAt:])
}

// walFrames returns how many frames of the write-ahead log at path belong
// to the log as it is now: what the next process to open the store reads
// and counts as not yet copied into the database.
func walFrames(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	if len(b) < walHeaderSize {
		return 0
	}
	salt := b[walSaltAt : walSaltAt+walSaltsByteLen]
	frame := walFrameHeader + int(endian.BigEndian.Uint32(b[walPageSizeAt:]))
	n := 0
	for at := walHeaderSize; at+frame <= len(b); at += frame {
		if !bytes.Equal(b[at+walFrameSaltAt:at+walFrameSaltAt+walSaltsByteLen], salt) {
			break
		}
		n++
	}
	return n
}
