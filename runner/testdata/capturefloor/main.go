// Command capturefloor is the floor the capture benchmarks set beside a
// detached supervisor's capture: the same command writing into a pipe of
// the size bgcmd asks for, copied through buffers of bgcmd's read size into
// a new file that is then fsynced and removed, with no bgcmd code. It
// treats the file's page cache as bgcmd's capture does: every 8 MiB it
// starts the writeback of what it wrote and lets go of the cache of the 8
// MiB before, so that its CPU figures count the same I/O work as bgcmd's,
// none of it left to the kernel's flusher threads. With
// -hash a second goroutine takes the sha256 of each chunk once it is
// written, as bgcmd hashes beside its copy.
//
// It is a process of its own so that it is measured as the supervisor is:
// its CPU time from its rusage once reaped, less the command's, which it
// prints.
//
// Usage: capturefloor [-hash] OUT ARGV...
// Output: one line, "BYTES SHA256 COMMAND_CPU_NS" (SHA256 is "-" without
// -hash).
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeSize, readBuf and window are bgcmd's: the pipe size of its pumps,
// the most a capture reads at once, and how often a capture starts
// writeback and drops the cache behind it.
const (
	pipeSize = 1 << 20
	readBuf  = 256 << 10
	window   = 8 << 20
)

func main() {
	hash := flag.Bool("hash", false, "hash the output beside the copy")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: capturefloor [-hash] OUT ARGV...")
		os.Exit(2)
	}
	if err := run(*hash, flag.Arg(0), flag.Args()[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "capturefloor:", err)
		os.Exit(1)
	}
}

func run(hash bool, path string, argv []string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	_, _ = unix.FcntlInt(pw.Fd(), unix.F_SETPIPE_SZ, pipeSize) // as bgcmd: the kernel may grant less
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		return err
	}
	pw.Close()
	var n int64
	sum := "-"
	w := &windowed{f: f}
	if hash {
		n, sum, err = copyHashed(w, pr)
	} else {
		// Plain Reader and Writer: io.Copy would splice in the kernel,
		// never seeing the bytes bgcmd has to read.
		n, err = io.CopyBuffer(w, struct{ io.Reader }{pr}, make([]byte, readBuf))
	}
	if err != nil {
		return err
	}
	if err := cmd.Wait(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	fmt.Println(n, sum, ru.Utime.Nano()+ru.Stime.Nano())
	return nil
}

// copyHashed copies r into w through buffers of bgcmd's read size and
// hands each chunk, once written, to a goroutine that hashes it. It
// returns the bytes copied and their sha256 in hex.
func copyHashed(w io.Writer, r io.Reader) (int64, string, error) {
	const depth = 4 // chunks in flight between the copy and the hash
	free := make(chan []byte, depth)
	for range depth {
		free <- make([]byte, readBuf)
	}
	written := make(chan []byte, depth)
	sum := make(chan string)
	go func() {
		h := sha256.New()
		for chunk := range written {
			h.Write(chunk)
			free <- chunk[:cap(chunk)]
		}
		sum <- hex.EncodeToString(h.Sum(nil))
	}()
	var n int64
	var err error
	for err == nil {
		buf := <-free
		m, rerr := r.Read(buf)
		if m > 0 {
			if _, werr := w.Write(buf[:m]); werr != nil {
				err = werr
			}
			n += int64(m)
			written <- buf[:m]
		} else {
			free <- buf
		}
		if rerr != nil {
			if rerr != io.EOF {
				err = rerr
			}
			break
		}
	}
	close(written)
	return n, <-sum, err
}

// windowed writes to f, starting the writeback of each window of bytes
// once written (sync_file_range) and dropping the page cache of the window
// before (POSIX_FADV_DONTNEED), as bgcmd's capture does.
type windowed struct {
	f                         *os.File
	written, flushed, dropped int64
}

func (w *windowed) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	if w.written-w.flushed >= window {
		fd := int(w.f.Fd())
		_ = unix.SyncFileRange(fd, w.flushed, w.written-w.flushed, unix.SYNC_FILE_RANGE_WRITE)
		if w.flushed > w.dropped {
			_ = unix.Fadvise(fd, w.dropped, w.flushed-w.dropped, unix.FADV_DONTNEED)
		}
		w.dropped, w.flushed = w.flushed, w.written
	}
	return n, err
}
