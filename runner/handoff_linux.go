//go:build linux

package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/spawn"
)

// A host hands a detached supervisor its work over a unix socket on the
// supervisor's descriptor 3, as two lines of JSON:
//
//  1. the store to open (openMsg), sent as soon as the supervisor starts:
//     a spare supervisor opens it long before there is a job; one started
//     for a job that follows at once (openMsg.JobFollows) opens it once it
//     needs it;
//  2. the job (spec), with the job's open working directory and the
//     supervisor's log file attached as SCM_RIGHTS descriptors, received
//     close-on-exec.
//
// The host closes its end after the second line (after its answer, for a
// job without a row); an end of file before it means the host is gone and
// the supervisor exits without doing anything. A host that asks for the
// supervisor back (spec.Return) keeps its end open instead: once the job
// has settled the supervisor writes spareAgain on it and waits for another
// spec line, which then also carries the write end of that job's report
// pipe (the first job's is descriptor 4).

// openMsg is the first line of the hand-over.
type openMsg struct {
	DBPath string `json:"db_path"`
	// DB is the PostgreSQL DSN of the store ("" = the SQLite file at
	// DBPath). It travels only here, never in argv or the environment.
	DB string `json:"db,omitempty"`
	// Host, HostID and ShareArtifacts are the launching store's: the
	// supervisor's store records and judges jobs as that host's.
	Host           string `json:"host"`
	HostID         string `json:"host_id"`
	ShareArtifacts bool   `json:"share_artifacts,omitempty"`
	// JobFollows says a job follows at once, one its host records itself
	// (spec.Unrecorded) while the supervisor starts the child: the
	// supervisor then opens the store only when it needs it, once the host
	// has written the row (or at once for a job that has one). Its open,
	// schema and statements would otherwise take the CPU from the host's
	// write, which the host's caller waits for, and the supervisor needs
	// the store only for the job's settle. A spare, started ahead of need,
	// opens it at once.
	JobFollows bool `json:"job_follows,omitempty"`
	// WritesRow says the job that follows has no row and the supervisor
	// writes it (spec.SupervisorWrites): it announces the job's create and
	// reports the job running once the child runs, and only then opens
	// the store and writes the row (see supervisor.announceTo).
	WritesRow bool `json:"writes_row,omitempty"`
}

// sameStore says whether m and o name the same store for the same host.
func (m openMsg) sameStore(o openMsg) bool {
	m.JobFollows, o.JobFollows = false, false
	m.WritesRow, o.WritesRow = false, false
	return m == o
}

// handoffFDs are the descriptors that travel with the spec line, in order.
const (
	handoffCwd    = iota // the job's checked working directory
	handoffLog           // the supervisor's log (its stdout and stderr)
	handoffStatus        // the report pipe: only for a supervisor's later jobs
	handoffFDCount
)

// sendLine writes v as one JSON line on the socket conn, with fds attached
// to its first byte (none when fds is empty).
func sendLine(conn *os.File, v any, fds ...*os.File) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	sc, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var oob []byte
	if len(fds) > 0 {
		ints := make([]int, len(fds))
		for i, f := range fds {
			ints[i] = int(f.Fd())
		}
		oob = unix.UnixRights(ints...)
	}
	var n int
	var serr error
	if err := sc.Write(func(fd uintptr) bool {
		n, serr = unix.SendmsgN(int(fd), b, oob, nil, unix.MSG_NOSIGNAL)
		return serr != unix.EAGAIN
	}); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	if n < len(b) { // the descriptors went with the first byte
		_, err = conn.Write(b[n:])
	}
	return err
}

// lineReader reads the hand-over's JSON lines from descriptor fd,
// collecting the descriptors that arrive with them.
type lineReader struct {
	fd  int
	buf []byte
	fds []*os.File
}

// next decodes the next line into v. io.EOF means the host closed the
// socket before sending it.
func (lr *lineReader) next(v any) error {
	for {
		if i := bytes.IndexByte(lr.buf, '\n'); i >= 0 {
			line := lr.buf[:i]
			lr.buf = lr.buf[i+1:]
			return json.Unmarshal(line, v)
		}
		chunk := make([]byte, 64<<10)
		oob := make([]byte, unix.CmsgSpace(4*handoffFDCount))
		n, oobn, _, _, err := unix.Recvmsg(lr.fd, chunk, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("read hand-over: %w", err)
		}
		if oobn > 0 {
			if err := lr.takeRights(oob[:oobn]); err != nil {
				return err
			}
		}
		if n == 0 {
			if len(lr.buf) > 0 {
				return io.ErrUnexpectedEOF
			}
			return io.EOF
		}
		lr.buf = append(lr.buf, chunk[:n]...)
	}
}

func (lr *lineReader) takeRights(oob []byte) error {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return fmt.Errorf("read hand-over descriptors: %w", err)
	}
	for i := range msgs {
		fds, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			return fmt.Errorf("read hand-over descriptors: %w", err)
		}
		for _, fd := range fds {
			lr.fds = append(lr.fds, os.NewFile(uintptr(fd), "handoff"))
		}
	}
	return nil
}

// close closes the descriptors nobody took.
func (lr *lineReader) close() {
	for _, f := range lr.fds {
		if f != nil {
			f.Close()
		}
	}
}

// take returns the descriptors of the spec line, checked: the job's
// directory and log, and the report pipe when one came (for a supervisor's
// later jobs; nil otherwise).
func (lr *lineReader) take() (cwd, logf, status *os.File, err error) {
	if n := len(lr.fds); n != handoffFDCount && n != handoffStatus {
		return nil, nil, nil, errors.New("hand-over without the job's directory and log")
	}
	cwd, logf = lr.fds[handoffCwd], lr.fds[handoffLog]
	if len(lr.fds) == handoffFDCount {
		status = lr.fds[handoffStatus]
	}
	lr.fds = nil
	return cwd, logf, status, nil
}

// spareCount is how many spare supervisors a runner that keeps spares
// (Options.Spare) has started ahead of need. One is not enough for calls
// that follow each other closely: the spare that replaces a taken one is
// still starting (a process's start-up and the opening of the store, a few
// milliseconds of CPU) when the next call comes, which then waits for it.
// With two, the next call takes the older one, started a call earlier.
const spareCount = 2

// maxIdleSpares is how many supervisors may wait for a job at once: the
// spares refillSpare starts and the supervisors that came back. Calls that
// follow each other faster than a job's supervisor comes back take both
// spares and start a third; keeping every supervisor that comes back,
// rather than letting one go so as to hold two, lets the runner settle at
// as many as such a stream needs, where with two it would start a process
// for every few jobs and let another go. Each waiting supervisor is an
// idle process with the store open: those beyond spareCount are let go
// once no start has taken a spare for spareTrimAfter, and all exit with
// the runner.
const maxIdleSpares = 2 * spareCount

// takeSpare returns the oldest spare supervisor waiting for a job, if any:
// the one most likely to have finished starting.
func (r *Runner) takeSpare() *supProc {
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	if len(r.spares) == 0 {
		return nil
	}
	p := r.spares[0]
	r.spares = r.spares[1:]
	r.lastTake = time.Now()
	p.spare = true
	return p
}

// refillSpare starts spare supervisors in the background, up to
// spareCount, when the runner keeps them (Options.Spare), so the next
// detached start skips the supervisor's start-up and its opening of the
// store. One supervisor asked back (returnSlots) counts as a spare on its
// way: a short job's comes back within milliseconds, and starting a
// process in its place would cost every call a process start again. Only
// one, so that a runner whose jobs run long still keeps one spare ready.
func (r *Runner) refillSpare() {
	if !r.keepSpare {
		return
	}
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	for ; len(r.spares)+r.spareStarting+min(r.returnSlots, 1) < spareCount && !r.closed; r.spareStarting++ {
		r.spareSpawns.Add(1)
		go r.spawnSpare()
	}
}

// spawnSpare starts one spare supervisor and adds it to the runner's
// spares, or lets it go when the runner was closed meanwhile.
func (r *Runner) spawnSpare() {
	defer r.spareSpawns.Done()
	p, err := spawnSupervisor(r.binary, r.openMsg(), nil)
	r.spareMu.Lock()
	r.spareStarting--
	if err == nil {
		r.lastSpare = p
	}
	switch {
	case err != nil:
		// The next start spawns its own supervisor, and says why if it
		// cannot.
	case r.closed:
		// Close ran while it started: let it go, and make Close (waiting
		// on spareSpawns) wait for it to exit as for the spares it found.
		r.spareMu.Unlock()
		letGo(p)
		return
	default:
		r.spares = append(r.spares, p)
		r.armTrim()
	}
	r.spareMu.Unlock()
}

// letGo closes a spare's hand-over and waits (up to spareExitWait) for it
// to exit, so that it no longer touches the home.
func letGo(p *supProc) {
	p.close()
	awaitExit(p)
}

// awaitExit waits (up to spareExitWait) for a supervisor let go to exit.
func awaitExit(p *supProc) {
	select {
	case <-p.exited:
	case <-time.After(spareExitWait):
	}
}

// spareExitWait bounds how long Close waits for the spare it let go to
// exit.
const spareExitWait = 5 * time.Second

// closeSpare lets the spare supervisors end: each reads the end of its
// hand-over and exits, which Close waits for (up to spareExitWait each), so
// no process of the runner's is left touching the home after it. A spare
// still starting when Close runs is let go and waited for the same way.
func (r *Runner) closeSpare() {
	r.spareMu.Lock()
	r.closed = true
	if r.trim != nil {
		r.trim.Stop()
		r.trim = nil
	}
	spares := r.spares
	r.spares = nil
	for p := range r.returning {
		p.conn.Close() // its supervisor exits once its job has settled
	}
	r.spareMu.Unlock()
	r.returns.Wait()
	for _, p := range spares {
		p.close()
	}
	for _, p := range spares {
		awaitExit(p)
	}
	r.spareSpawns.Wait() // a spare still starting is let go too
}

// Prestarted is a detached supervisor started by Prestart before its
// runner's store was open.
type Prestarted struct{ p *supProc }

// Prestart starts a detached supervisor of binary (the bgcmd binary, as
// Options.Binary) for the store opts describes, before that store is open:
// a short-lived host (bgcmd run) then opens its own store while the
// supervisor starts and opens it too, and the runner whose store it is
// hands it the first detached start as it would a spare
// (Options.Prestarted). opts are the jobstore.Options the host opens the
// store with; Host and HostID must be set. The supervisor holds no job and
// no environment until it is handed one; Close lets it exit when no runner
// takes it. When this process started one of binary earlier still (bgcmd's
// main does, while it initialises: internal/launch.StartEarly), that one is
// sent the store and used.
func Prestart(binary string, opts jobstore.Options) (*Prestarted, error) {
	if opts.Host == "" || opts.HostID == "" {
		return nil, errors.New("prestart supervisor: the store's Host and HostID must be set")
	}
	path := opts.Path
	if path != "" {
		var err error
		if path, err = filepath.Abs(path); err != nil {
			return nil, fmt.Errorf("prestart supervisor: %w", err)
		}
	}
	om := openMsg{DBPath: path, DB: opts.DSN, Host: opts.Host,
		HostID: opts.HostID, ShareArtifacts: opts.ShareArtifacts,
		// A host that has not opened its store (Deferred) leaves the job's
		// row to the supervisor (Options.SupervisorWrites): that one opens
		// the store once the job runs and is announced.
		JobFollows: !opts.Deferred, WritesRow: opts.Deferred}
	if sp := spawn.TakeEarly(binary, om.DB != ""); sp != nil {
		return &Prestarted{p: adoptSupervisor(sp, om)}, nil
	}
	p, err := spawnSupervisor(binary, om, nil)
	if err != nil {
		return nil, err
	}
	return &Prestarted{p: p}, nil
}

// Close lets a supervisor no runner took exit; after a runner took it, it
// does nothing.
func (ps *Prestarted) Close() {
	if ps != nil && ps.p != nil {
		ps.p.close()
		ps.p = nil
	}
}

// adoptPrestarted makes ps one of the runner's spares when it was started for the
// runner's store (it is closed otherwise).
func (r *Runner) adoptPrestarted(ps *Prestarted) {
	if ps == nil || ps.p == nil {
		return
	}
	p := ps.p
	ps.p = nil
	if !r.detached || !p.om.sameStore(r.openMsg()) {
		p.close()
		return
	}
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	if len(r.spares) >= spareCount {
		p.close()
		return
	}
	r.spares = append(r.spares, p)
}
