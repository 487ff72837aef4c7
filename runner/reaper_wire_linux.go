//go:build linux

package runner

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"

	"golang.org/x/sys/unix"
)

// The wire between a host and its reaper processes: a unix stream socket
// pair, the reaper's end on its descriptor 3. The host sends one request
// per job: a 4-byte big-endian length and that many bytes of JSON (a
// reapRequest), the descriptors the job needs riding as SCM_RIGHTS on the
// first bytes. The reaper answers with JSON lines (reapReport): first the
// job's pid or why it could not start, then, once every process of the job
// is reaped, how it ended. Between the two the host sends one byte, once it
// has tried to record the job's start: ackRecorded or ackUnrecorded. The
// next request comes only after the last report.

// The host's answer to a pid report. A reaper that reads ackUnrecorded, or
// the end of the socket (the host died before it could record the job),
// kills the job's process group: no row names that job, so nobody else
// would ever stop it.
const (
	ackRecorded   byte = 'R'
	ackUnrecorded byte = 'U'
)

// readAck reads the host's answer to a pid report on the reaper's end and
// reports whether the job is on record.
func readAck(fd int) bool {
	b, ok := readAnswer(fd)
	return ok && b == ackRecorded
}

// readAnswer reads the host's one-byte answer to a pid report from fd; ok
// is false when the socket ended (or failed) before it.
func readAnswer(fd int) (answer byte, ok bool) {
	var b [1]byte
	n, err := readIgnoringEINTR(fd, b[:])
	return b[0], err == nil && n == 1
}

// reaperSocketFD is the reaper's end of the socket pair.
const reaperSocketFD = 3

// maxRequestBytes bounds one request: argv and environment together stay
// far below it (the kernel's own limit for an exec is a few MiB).
const maxRequestBytes = 64 << 20

// reapRequest asks a reaper to start one job. The job's environment travels
// only this way, never on disk. Descriptors come in this order: stdout,
// stderr, then the working directory if HasDir, then the job's cgroup if
// HasCgroup.
type reapRequest struct {
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	// HasDir: the job starts in the directory handle that travels with
	// the request (the one the policy checked), never in a path.
	HasDir bool `json:"has_dir,omitempty"`
	// Dir is the working directory as a path, only when no handle
	// travels.
	Dir string `json:"dir,omitempty"`
	// HasCgroup: the job starts in the cgroup whose directory handle
	// travels with the request (CLONE_INTO_CGROUP).
	HasCgroup bool `json:"has_cgroup,omitempty"`
	// HasStdin: the program reads the descriptor that travels last with
	// the request (an on_settle hook's status JSON), not /dev/null.
	HasStdin bool `json:"has_stdin,omitempty"`
}

// wantFDs is how many descriptors must travel with the request.
func (q *reapRequest) wantFDs() int {
	n := 2
	if q.HasDir {
		n++
	}
	if q.HasCgroup {
		n++
	}
	if q.HasStdin {
		n++
	}
	return n
}

// reapReport is one line a reaper writes per event of a job: first the
// job's pid (or why it could not start), then, after everything is reaped,
// how the job ended.
type reapReport struct {
	PID        int    `json:"pid,omitempty"`
	StartError string `json:"start_error,omitempty"`
	Errno      int    `json:"errno,omitempty"`

	Done      bool   `json:"done,omitempty"`
	Status    uint32 `json:"status,omitempty"`
	Leftovers int    `json:"leftovers,omitempty"`
	UserNS    int64  `json:"user_ns,omitempty"`
	SystemNS  int64  `json:"system_ns,omitempty"`
	MaxRSSKiB int64  `json:"max_rss_kib,omitempty"`
}

// sendRequest writes one request with its descriptors on the host's end.
// sent says whether any byte left: before that the reaper has seen
// nothing of the request, so it is safe to try another reaper.
func sendRequest(conn *net.UnixConn, q *reapRequest, fds []int) (sent bool, err error) {
	body, err := json.Marshal(q)
	if err != nil {
		return false, err
	}
	msg := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(msg, uint32(len(body)))
	msg = append(msg, body...)
	n, _, err := conn.WriteMsgUnix(msg, unix.UnixRights(fds...), nil)
	if err != nil {
		return n > 0, err
	}
	if n < len(msg) {
		// A large request may not fit the socket buffer at once; the
		// descriptors went with the first bytes.
		if _, err := conn.Write(msg[n:]); err != nil {
			return true, err
		}
	}
	return true, nil
}

// readRequest reads the next request and its descriptors (close-on-exec)
// on the reaper's end. io.EOF means the host closed its end (or died)
// between requests.
func readRequest(fd int) (*reapRequest, []int, error) {
	var hdr [4]byte
	oob := make([]byte, unix.CmsgSpace(5*4)) // stdout, stderr, cwd, cgroup, stdin
	var n, oobn, flags int
	var err error
	for {
		n, oobn, flags, _, err = unix.Recvmsg(fd, hdr[:], oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read request: %w", err)
	}
	if n == 0 {
		return nil, nil, io.EOF
	}
	var fds []int
	if oobn > 0 {
		msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
		if perr == nil {
			for i := range msgs {
				got, rerr := unix.ParseUnixRights(&msgs[i])
				if rerr == nil {
					fds = append(fds, got...)
				}
			}
		}
	}
	fail := func(err error) (*reapRequest, []int, error) {
		closeFDs(fds)
		return nil, nil, err
	}
	if flags&unix.MSG_CTRUNC != 0 {
		return fail(errors.New("read request: descriptors truncated"))
	}
	if err := readFull(fd, hdr[n:]); err != nil {
		return fail(err)
	}
	size := binary.BigEndian.Uint32(hdr[:])
	if size > maxRequestBytes {
		return fail(fmt.Errorf("read request: %d bytes is too large", size))
	}
	body := make([]byte, size)
	if err := readFull(fd, body); err != nil {
		return fail(err)
	}
	var q reapRequest
	if err := json.Unmarshal(body, &q); err != nil {
		return fail(fmt.Errorf("read request: %w", err))
	}
	if len(fds) != q.wantFDs() {
		return fail(fmt.Errorf("read request: %d descriptors, want %d", len(fds), q.wantFDs()))
	}
	return &q, fds, nil
}

// readFull fills b from the blocking descriptor fd.
func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := readIgnoringEINTR(fd, b)
		if err != nil {
			return fmt.Errorf("read request: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("read request: %w", io.ErrUnexpectedEOF)
		}
		b = b[n:]
	}
	return nil
}

// writeReport writes one report line on the reaper's end.
func writeReport(fd int, r *reapReport) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	for len(b) > 0 {
		// MSG_NOSIGNAL: a host that is gone is an error here, not a signal.
		n, err := unix.SendmsgN(fd, b, nil, nil, unix.MSG_NOSIGNAL)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
