package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/bgcmd/bgcmd"
)

// track records a started job as running (for the chaos goroutine).
func (s *soaker) track(j *jobRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running[j.id] = j
	s.started++
}

func (s *soaker) untrack(j *jobRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, j.id)
}

// drive runs one spec to its settle as its mode says.
func (s *soaker) drive(ctx context.Context, sp *spec) *jobRun {
	j := &jobRun{spec: sp}
	switch sp.mode {
	case modeHost:
		s.driveHost(ctx, j)
	default:
		s.driveDetached(ctx, j)
	}
	if j.id != "" {
		s.untrack(j)
	}
	return j
}

func (s *soaker) runArgs(sp *spec, wait bool) []string {
	args := []string{"--session", sp.session, "run", "--cwd", s.h.root}
	if wait {
		args = append(args, "--wait")
	}
	args = append(args, sp.flags...)
	return append(append(args, "--"), sp.argv...)
}

// driveDetached: `bgcmd run`, an optional `bgcmd kill`, then `bgcmd wait`
// (or, unread, read-only polling of the database).
func (s *soaker) driveDetached(ctx context.Context, j *jobRun) {
	sp := j.spec
	res, err := s.h.run(ctx, append([]string{"--json"}, s.runArgs(sp, false)...)...)
	if err != nil {
		j.fail("%v", err)
		return
	}
	var st bgcmd.Status
	if res.code != 0 || json.Unmarshal(res.stdout, &st) != nil || st.ID == "" {
		j.fail("run: %s", res)
		return
	}
	j.id = st.ID
	s.track(j)
	if sp.kind == kKill {
		s.killWhenPrinted(ctx, j)
	}
	if sp.mode == modeUnread {
		s.pollSettled(ctx, j)
		return
	}
	s.waitCLI(ctx, j)
}

// killWhenPrinted sends `bgcmd kill` once the job has printed
// killAfterBytes (or has settled some other way).
func (s *soaker) killWhenPrinted(ctx context.Context, j *jobRun) {
	log := filepath.Join(s.h.dir, "jobs", j.id, "stdout.log")
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(log); err == nil && fi.Size() >= j.spec.killAfterBytes {
			break
		}
		if rec, err := s.ro.Get(ctx, j.id); err == nil && rec.State.Settled() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := s.h.run(ctx, "--json", "kill", j.id)
	if err != nil {
		j.fail("%v", err)
		return
	}
	j.killSent = true
	if res.code != 0 {
		j.fail("kill: %s", res)
	}
	// A kill returns the status once settled, which reads the job.
	var st bgcmd.Status
	if json.Unmarshal(res.stdout, &st) == nil && st.State.Settled() {
		j.read = true
	}
}

// waitCLI restarts (or continues) with `bgcmd wait` and checks its exit
// code against the status it printed.
func (s *soaker) waitCLI(ctx context.Context, j *jobRun) {
	res, err := s.h.run(ctx, "--json", "wait", j.id, "--timeout", "3m")
	if err != nil {
		j.fail("%v", err)
		return
	}
	var st bgcmd.Status
	if err := json.Unmarshal(res.stdout, &st); err != nil {
		j.fail("wait printed no status: %s", res)
		return
	}
	if !st.State.Settled() {
		j.fail("wait returned an unsettled job: %s", res)
		return
	}
	j.read = true
	if want := exitCodeFor(&st); res.code != want {
		j.fail("wait exited %d for a job %s (exit_code %v, signal %q), want %d", res.code, st.State, st.ExitCode, st.Signal, want)
	}
}

// pollSettled waits for the job through the read-only database only.
func (s *soaker) pollSettled(ctx context.Context, j *jobRun) {
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		rec, err := s.ro.Get(ctx, j.id)
		if err == nil && rec.State.Settled() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	j.fail("job %s did not settle within 3m", j.id)
}

var uuidLine = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// driveHost runs `bgcmd run --wait` as a host, SIGKILLs it at the spec's
// moment, and restarts: `bgcmd wait` on the job, or a new start when the
// host died before the job existed.
func (s *soaker) driveHost(ctx context.Context, j *jobRun) {
	sp := j.spec
	cmd := s.h.command(ctx, s.runArgs(sp, true)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		j.fail("start host: %v", err)
		return
	}
	j.hostPID = cmd.Process.Pid
	var timer *time.Timer
	if sp.hostKillAfter >= 0 {
		timer = time.AfterFunc(sp.hostKillAfter, func() { _ = cmd.Process.Kill() })
	}
	err := cmd.Wait()
	if timer != nil {
		timer.Stop()
	}
	var ee *exec.ExitError
	killed := errors.As(err, &ee) && !ee.Exited() && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
	first, _, _ := strings.Cut(out.String(), "\n")
	if uuidLine.MatchString(first) {
		j.id = first
		s.track(j)
	}
	if !killed {
		if j.id == "" {
			j.fail("run --wait printed no job id: exit %v, stdout %q, stderr %q", err, clip(out.Bytes()), clip(errb.Bytes()))
			return
		}
		j.read = true
		rec, gerr := s.ro.Get(ctx, j.id)
		if gerr != nil {
			j.fail("get %s: %v", j.id, gerr)
			return
		}
		code := 0
		if ee != nil {
			code = ee.ExitCode()
		}
		st := bgcmd.Status{State: rec.State, ExitCode: rec.ExitCode, Signal: rec.Signal}
		if want := exitCodeFor(&st); code != want {
			j.fail("run --wait exited %d for a job %s, want %d (stderr %q)", code, rec.State, want, clip(errb.Bytes()))
		}
		return
	}
	j.hostKilled = true
	s.hostKills.Add(1)
	if j.id == "" {
		id, ferr := s.findByTag(ctx, sp.tag)
		if ferr != nil {
			j.fail("find job by tag: %v", ferr)
			return
		}
		if id == "" {
			// The host died before the job existed: restart it.
			j.restarted = true
			s.restarts.Add(1)
			s.driveDetached(ctx, j)
			return
		}
		j.id = id
		s.track(j)
	}
	s.waitCLI(ctx, j)
}

// jobDirs lists the directories under <home>/jobs: those of no job (a host
// killed between creating the directory and the row) and those of settled
// jobs (which their supervisor or reconcile should have removed).
func (s *soaker) jobDirs() (stray, settled []string) {
	ents, _ := os.ReadDir(filepath.Join(s.h.dir, "jobs"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue // the runner's own bookkeeping (its reconcile lock)
		}
		rec, err := s.ro.Get(context.Background(), e.Name())
		switch {
		case errors.Is(err, bgcmd.ErrNotFound):
			stray = append(stray, e.Name())
		case err == nil && rec.State.Settled():
			files, _ := os.ReadDir(filepath.Join(s.h.dir, "jobs", e.Name()))
			var names []string
			for _, f := range files {
				names = append(names, f.Name())
			}
			settled = append(settled, fmt.Sprintf("%s (%s, holding %v)", e.Name(), rec.State, names))
		}
	}
	return stray, settled
}

// findByTag returns the id of the job whose last argument is tag ("" when
// there is none). argv is a JSON array: its text ends with the last
// argument's string (the tags need no escaping), on either backend.
func (s *soaker) findByTag(ctx context.Context, tag string) (string, error) {
	rows, err := queryStrings(ctx, s.ro, fmt.Sprintf(`SELECT id FROM jobs WHERE argv LIKE '%%"%s"]'`, tag))
	if err != nil || len(rows) == 0 {
		return "", err
	}
	if len(rows) > 1 {
		return "", fmt.Errorf("%d jobs carry tag %s", len(rows), tag)
	}
	return rows[0][0], nil
}

// chaos SIGKILLs the supervisors of random running jobs at random moments,
// keeping the number killed near supervisorKillShare of the jobs started,
// and restarts after each kill with `bgcmd reconcile`.
func (s *soaker) chaos(ctx context.Context) {
	rng := rand.New(rand.NewSource(s.cfg.seed + 7))
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(20+rng.Intn(180)) * time.Millisecond):
		}
		s.mu.Lock()
		if float64(s.supervisorKills.Load()) >= s.cfg.supervisorKillShare*float64(s.started) || len(s.running) == 0 {
			s.mu.Unlock()
			continue
		}
		ids := make([]string, 0, len(s.running))
		for id := range s.running {
			ids = append(ids, id)
		}
		victim := s.running[ids[rng.Intn(len(ids))]]
		s.mu.Unlock()

		rec, err := s.ro.Get(ctx, victim.id)
		if err != nil || rec.State.Settled() || rec.SupervisorPID <= 1 ||
			!strings.Contains(cmdline(rec.SupervisorPID), "__supervise") {
			s.killMisses.Add(1)
			continue
		}
		if !sigkill(rec.SupervisorPID, rec.SupervisorStart) {
			s.killMisses.Add(1)
			continue
		}
		victim.supervisorKilled.Store(true)
		s.supervisorKills.Add(1)
		// Wait for the supervisor to be gone, then restart: reconcile.
		for isProcess(rec.SupervisorPID, rec.SupervisorStart) && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		if res, err := s.h.run(context.WithoutCancel(ctx), "reconcile"); err != nil || res.code != 0 {
			s.t.Errorf("reconcile after killing a supervisor: %v %s", err, res)
		}
		s.reconcileRuns.Add(1)
	}
}
