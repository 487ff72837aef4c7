//go:build linux

package runner

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ContainCgroup: the job also runs in its own cgroup v2 (job-<id> below
// the policy's delegated cgroup), which nothing in it can leave; when the
// main process has exited the whole cgroup is killed (cgroup.kill) and
// removed.
const ContainCgroup Containment = "cgroup"

// cgroupDrain bounds the wait for a killed cgroup to empty.
const cgroupDrain = 10 * time.Second

// jobCgroup is a job's own cgroup directory, open for CLONE_INTO_CGROUP.
type jobCgroup struct {
	dir string
	fd  *os.File
	// limited: limits were written to it; killAll then reads events, what
	// they did.
	limited bool
	events  limitEvents
}

// newJobCgroup creates root/job-<id>.
func newJobCgroup(root, id string) (*jobCgroup, error) {
	dir := filepath.Join(root, "job-"+id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cgroup %s: %w (check that the policy's cgroup is a delegated, writable cgroup v2 directory)", dir, err)
	}
	fd, err := os.Open(dir)
	if err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("open cgroup %s: %w", dir, err)
	}
	return &jobCgroup{dir: dir, fd: fd}, nil
}

// place makes a command start inside the cgroup.
func (c *jobCgroup) place(attr *syscall.SysProcAttr) {
	attr.UseCgroupFD = true
	attr.CgroupFD = int(c.fd.Fd())
}

// procs lists the pids in the cgroup.
func (c *jobCgroup) procs() []string {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// populated reads cgroup.events.
func (c *jobCgroup) populated() bool {
	f, err := os.Open(filepath.Join(c.dir, "cgroup.events"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() == "populated 1" {
			return true
		}
	}
	return false
}

// killAll kills every process left in the cgroup, waits (bounded) until it
// is empty and removes it. It returns how many processes it killed.
func (c *jobCgroup) killAll() (int, error) {
	defer c.fd.Close()
	n := len(c.procs())
	if n > 0 {
		if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0); err != nil {
			return 0, fmt.Errorf("kill cgroup %s: %w", c.dir, err)
		}
	}
	deadline := time.Now().Add(cgroupDrain)
	for c.populated() {
		if time.Now().After(deadline) {
			return n, fmt.Errorf("cgroup %s still holds processes %s %s after cgroup.kill", c.dir, strings.Join(c.procs(), " "), cgroupDrain)
		}
		time.Sleep(time.Millisecond) // a bounded retry pause while the kernel tears the processes down
	}
	if c.limited {
		c.events = c.readEvents()
	}
	for {
		err := os.Remove(c.dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return n, nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return n, fmt.Errorf("remove cgroup %s: %w", c.dir, err)
		}
		time.Sleep(time.Millisecond) // a bounded retry pause: exiting tasks still pin it
	}
}

// cgroupProc is a job whose processes also live in their own cgroup.
type cgroupProc struct {
	jobProc
	cg *jobCgroup
}

func (p *cgroupProc) wait() procExit {
	out := p.jobProc.wait()
	n, err := p.cg.killAll()
	out.leftovers += n
	out.cgroupErr = err
	out.limits = p.cg.events
	return out
}
