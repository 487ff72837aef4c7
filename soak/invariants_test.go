package soak

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// check runs every invariant over the store and the machine after the run.
func (s *soaker) check(runs []*jobRun) *soakFigures {
	ctx := context.Background()
	f := &soakFigures{ByKind: map[string]int{}, ByMode: map[string]int{}, ByState: map[string]int{},
		HostKills: s.hostKills.Load(), Restarts: s.restarts.Load(), SupervisorKills: s.supervisorKills.Load(),
		KillMisses: s.killMisses.Load(), ReconcileRuns: s.reconcileRuns.Load(), Jobs: len(runs),
		Machine: fmt.Sprintf("%d cores, %s", runtime.NumCPU(), runtime.Version())}

	recs, err := s.allJobs(ctx)
	if err != nil {
		f.violate("list jobs: %v", err)
		return f
	}
	byTag := map[string]*jobstore.Record{}
	for _, r := range recs {
		if len(r.Argv) == 0 {
			f.violate("job %s has an empty argv", r.ID)
			continue
		}
		tag := r.Argv[len(r.Argv)-1]
		if byTag[tag] != nil {
			f.violate("two jobs carry tag %s: %s and %s", tag, byTag[tag].ID, r.ID)
		}
		byTag[tag] = r
		f.ByState[string(r.State)]++
		if r.State == bgcmd.StateRunning {
			f.RunningAfterReconcile++
			f.violate("job %s (%s) is still running after reconcile", r.ID, tag)
		}
	}
	known := map[string]bool{}
	arts := &artifacts.Store{Dir: filepath.Join(s.h.dir, "artifacts")}
	for _, j := range runs {
		sp := j.spec
		known[sp.tag] = true
		f.ByKind[sp.kind.String()]++
		f.ByMode[sp.mode.String()]++
		for _, e := range j.errs {
			f.violate("job %d (%s, %s): %s", sp.n, sp.kind, sp.mode, e)
		}
		rec := byTag[sp.tag]
		if rec == nil {
			if len(j.errs) == 0 {
				f.violate("job %d (%s): no row for tag %s", sp.n, sp.kind, sp.tag)
			}
			continue
		}
		if j.id != "" && j.id != rec.ID {
			f.violate("job %d: the CLI said id %s, the row is %s", sp.n, j.id, rec.ID)
		}
		s.checkJob(ctx, f, j, rec, arts)
	}
	for tag, r := range byTag {
		if !known[tag] {
			f.violate("job %s carries tag %s that the harness never issued", r.ID, tag)
		}
	}
	s.checkEvents(ctx, f)
	s.checkCounters(ctx, f, runs, byTag)
	s.checkProcesses(f, recs)
	s.checkDatabase(ctx, f)
	// The hash chain over every transition and refusal, written by many
	// processes at once, verifies through the binary.
	if res, err := s.h.run(ctx, "verify", "--chain"); err != nil || res.code != 0 {
		f.violate("bgcmd verify --chain: %v %s", err, res)
	}
	return f
}

// allJobs pages through every job, newest first.
func (s *soaker) allJobs(ctx context.Context) ([]*jobstore.Record, error) {
	var out []*jobstore.Record
	p := jobstore.ListParams{Limit: jobstore.MaxListLimit}
	for {
		res, err := s.ro.List(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Jobs...)
		if res.NextBefore == "" {
			return out, nil
		}
		p.Before = res.NextBefore
	}
}

// checkJob checks one job's state and banked output against its spec.
func (s *soaker) checkJob(ctx context.Context, f *soakFigures, j *jobRun, rec *jobstore.Record, arts *artifacts.Store) {
	sp := j.spec
	where := fmt.Sprintf("job %d %s (%s, %s, %s)", sp.n, rec.ID, sp.kind, sp.mode, strings.Join(sp.argv[:len(sp.argv)-1], " "))
	// Interrupted: the harness killed its supervisor, or killed its host
	// before the job reached a supervisor: the row still names the host,
	// the reconciler that took the job over from the dead host says so, or
	// the row names the supervisor the host had started for it (its first
	// row does) but no child was ever recorded, because the host died
	// before handing that supervisor the job, which then ended with none.
	neverStarted := rec.StartedAt == nil && rec.PID == 0
	startInterrupted := j.hostKilled && (rec.SupervisorPID == j.hostPID || s.orphanedFrom(ctx, rec.ID) == j.hostPID || neverStarted)
	interrupted := j.supervisorKilled.Load() || startInterrupted
	natural := rec.State == sp.want.state
	if interrupted {
		f.Interrupted++
		if natural {
			f.InterruptedNatural++
		}
	}
	switch {
	case natural:
		if sp.want.exitCode != nil && (rec.ExitCode == nil || *rec.ExitCode != *sp.want.exitCode) {
			f.violate("%s: exit code %v, want %d", where, fmtCode(rec.ExitCode), *sp.want.exitCode)
		}
		if sp.want.signal != "" && rec.Signal != sp.want.signal {
			f.violate("%s: signal %q (exit code %v), want %s", where, rec.Signal, fmtCode(rec.ExitCode), sp.want.signal)
		}
	case interrupted && rec.State == bgcmd.StateOrphaned:
		f.InterruptedOrphaned++
	default:
		f.violate("%s: state %s (error %q), want %s%s (%s)", where, rec.State, rec.Error, sp.want.state,
			map[bool]string{true: " or orphaned", false: ""}[interrupted], s.history(ctx, j, rec))
		return
	}

	banked, err := s.ro.Artifacts(ctx, rec.ID)
	if err != nil {
		f.violate("%s: artifacts: %v", where, err)
		return
	}
	if len(banked) == 0 && rec.State == bgcmd.StateOrphaned && startInterrupted {
		// The host died before a supervisor made the logs: nothing printed.
		f.StartInterruptedNoLogs++
		return
	}
	for _, st := range []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr} {
		want := sp.want.stdout
		if st == bgcmd.Stderr {
			want = sp.want.stderr
		}
		var a *bgcmd.Artifact
		for i := range banked {
			if banked[i].Stream == st {
				a = &banked[i]
			}
		}
		if a == nil {
			f.violate("%s: no banked %s (state %s, error %q; %s)", where, st, rec.State, rec.Error, s.history(ctx, j, rec))
			continue
		}
		data, err := os.ReadFile(arts.Path(a.SHA256))
		if err != nil {
			f.violate("%s: %s artifact: %v", where, st, err)
			continue
		}
		if got := sha(data); got != a.SHA256 || int64(len(data)) != a.Bytes {
			f.violate("%s: %s artifact holds %d bytes with sha256 %s, its row says %d bytes, %s", where, st, len(data), got, a.Bytes, a.SHA256)
			continue
		}
		exactMatch := natural
		if err := want.check(data, exactMatch); err != nil {
			f.violate("%s: %s: %v", where, st, err)
			continue
		}
		f.BytesVerified += int64(len(data))
		switch {
		case want.pattern != nil:
			f.PatternStreams++
		case exactMatch && want.full >= 0:
			f.ExactStreams++
		default:
			f.PrefixStreams++
		}
		// Read it back as a user would: every interrupted or killed job,
		// and a sample of the rest (never an unread one: reading marks it).
		if (interrupted || rec.State == bgcmd.StateKilled || sp.n%10 == 0) && j.read {
			got, err := s.readCLI(ctx, rec.ID, st)
			switch {
			case err != nil:
				f.violate("%s: bgcmd output --stream %s: %v", where, st, err)
			case string(got) != string(data):
				f.violate("%s: bgcmd output --stream %s gave %d bytes (sha256 %s), the artifact holds %d (sha256 %s)",
					where, st, len(got), sha(got), len(data), a.SHA256)
			default:
				f.CLIReadBacks++
			}
		} else if interrupted {
			got, err := readAll(artifacts.Source{Path: arts.Path(a.SHA256), IndexPath: arts.Path(a.SHA256) + artifacts.IndexSuffix, Final: true})
			if err != nil || string(got) != string(data) {
				f.violate("%s: reading the partial %s back: %v (%d bytes of %d)", where, st, err, len(got), len(data))
			}
		}
	}
}

// history describes what happened to a job, for a violation's message: who
// supervised it, what the harness killed, its events.
func (s *soaker) history(ctx context.Context, j *jobRun, rec *jobstore.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "supervisor pid %d (detached %v), host pid %d (SIGKILLed %v, restarted %v), supervisor SIGKILLed %v, kill sent %v",
		rec.SupervisorPID, rec.Detached, j.hostPID, j.hostKilled, j.restarted, j.supervisorKilled.Load(), j.killSent)
	events, err := s.ro.Events(ctx, rec.ID)
	if err != nil {
		return b.String() + "; events: " + err.Error()
	}
	for _, e := range events {
		fmt.Fprintf(&b, "; event %s→%s at %s %v", e.From, e.To, e.At.Format("15:04:05.000000"), e.Detail)
	}
	return b.String()
}

func fmtCode(c *int) string {
	if c == nil {
		return "none"
	}
	return strconv.Itoa(*c)
}

// outputPage is `bgcmd output --json --raw`'s page.
type outputPage struct {
	NextOffset int64  `json:"next_offset"`
	TotalSize  int64  `json:"total_size"`
	HasMore    bool   `json:"has_more"`
	Data       string `json:"data_base64"`
}

// readCLI reads a whole stream back through `bgcmd output`, page by page.
func (s *soaker) readCLI(ctx context.Context, id string, st bgcmd.Stream) ([]byte, error) {
	var out []byte
	var off int64
	for page := 0; page < 1000; page++ {
		res, err := s.h.run(ctx, "--json", "output", id, "--stream", string(st), "--raw",
			"--offset", strconv.FormatInt(off, 10), "--limit", strconv.Itoa(artifacts.MaxPageBytes))
		if err != nil {
			return nil, err
		}
		if res.code != 0 {
			return nil, fmt.Errorf("%s", res)
		}
		var p outputPage
		if err := json.Unmarshal(res.stdout, &p); err != nil {
			return nil, fmt.Errorf("decode page: %w (%s)", err, clip(res.stdout))
		}
		b, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil {
			return nil, fmt.Errorf("decode data_base64: %w", err)
		}
		out = append(out, b...)
		if len(b) == 0 || p.NextOffset >= p.TotalSize && !p.HasMore {
			return out, nil
		}
		off = p.NextOffset
	}
	return nil, fmt.Errorf("more than 1000 pages")
}

// readAll reads a whole source through the paged reader.
func readAll(src artifacts.Source) ([]byte, error) {
	var out []byte
	var off int64
	for {
		res, err := artifacts.Read(src, artifacts.Page{Offset: off, Limit: artifacts.MaxPageBytes, Raw: true})
		if err != nil {
			return out, err
		}
		out = append(out, res.Data...)
		if len(res.Data) == 0 || !res.HasMore && res.NextOffset >= res.TotalSize {
			return out, nil
		}
		off = res.NextOffset
	}
}

// checkEvents: every job has its creation event and exactly one terminal
// event, the last one, naming the job's state.
func (s *soaker) checkEvents(ctx context.Context, f *soakFigures) {
	rows, err := queryStrings(ctx, s.ro, `SELECT j.id,
		(SELECT COUNT(*) FROM job_events e WHERE e.job_id = j.id AND e.from_state IS NULL AND e.to_state = 'running'),
		(SELECT COUNT(*) FROM job_events e WHERE e.job_id = j.id AND e.to_state <> 'running'),
		(SELECT COUNT(*) FROM job_events e WHERE e.job_id = j.id),
		CASE WHEN (SELECT e.to_state FROM job_events e WHERE e.job_id = j.id ORDER BY e.seq DESC LIMIT 1) = j.state
			THEN 1 ELSE 0 END
		FROM jobs j`)
	if err != nil {
		f.violate("events query: %v", err)
		return
	}
	for _, r := range rows {
		n, _ := strconv.Atoi(r[3])
		f.Events += n
		if r[1] != "1" || r[2] != "1" || r[3] != "2" || r[4] != "1" {
			f.TerminalEventsBad++
			f.violate("job %s: %s creation, %s terminal, %s events in all; last names its state: %s", r[0], r[1], r[2], r[3], r[4])
		}
	}
}

// checkCounters: each session's counters equal the truth computed by SQL
// over the table, and the harness's own truth (the jobs it never read).
func (s *soaker) checkCounters(ctx context.Context, f *soakFigures, runs []*jobRun, byTag map[string]*jobstore.Record) {
	truth := map[string][2]int{}
	rows, err := queryStrings(ctx, s.ro, `SELECT session,
		SUM(CASE WHEN state = 'running' THEN 1 ELSE 0 END),
		SUM(CASE WHEN state <> 'running' AND seen_at IS NULL THEN 1 ELSE 0 END)
		FROM jobs GROUP BY session`)
	if err != nil {
		f.violate("counters truth: %v", err)
		return
	}
	for _, r := range rows {
		a, _ := strconv.Atoi(r[1])
		b, _ := strconv.Atoi(r[2])
		truth[r[0]] = [2]int{a, b}
	}
	harness := map[string]int{}
	mismatch := map[string]int{}
	for _, j := range runs {
		rec := byTag[j.spec.tag]
		if rec == nil {
			continue
		}
		if !j.read {
			harness[rec.Session]++
		}
		if seen := rec.SeenAt != nil; seen != j.read {
			mismatch[rec.Session]++
			f.violate("job %d %s (%s, %s): seen_at %v, but the harness %s it", j.spec.n, rec.ID, j.spec.kind, j.spec.mode,
				rec.SeenAt, map[bool]string{true: "read", false: "never read"}[j.read])
		}
	}
	for _, sess := range soakSessions {
		c, err := s.ro.Counters(ctx, sess)
		if err != nil {
			f.violate("counters %s: %v", sess, err)
			continue
		}
		cf := counterFigure{Session: sess, Running: c.Running, Finished: c.Finished,
			SQLRunning: truth[sess][0], SQLFinished: truth[sess][1], HarnessFinished: harness[sess],
			SeenMismatches: mismatch[sess]}
		f.Counters = append(f.Counters, cf)
		if cf.Running != cf.SQLRunning || cf.Finished != cf.SQLFinished || cf.Finished != cf.HarnessFinished || cf.Running != 0 {
			f.violate("session %s: counters running %d finished %d; SQL says %d/%d; the harness left %d unread",
				sess, cf.Running, cf.Finished, cf.SQLRunning, cf.SQLFinished, cf.HarnessFinished)
		}
	}
}

// checkProcesses: nothing of any job's process group (fork-grandchild.sh's
// sleeper stays in it), no descendant that escaped it (a process that
// carries the soak home in its environment or runs in the soak's
// directories, whatever its session or group) and no supervisor is alive
// once the jobs have settled; no job directory is left.
func (s *soaker) checkProcesses(f *soakFigures, recs []*jobstore.Record) {
	groups := map[int]int64{} // pgid → the leader's start time
	for _, r := range recs {
		if r.PGID > 1 {
			groups[r.PGID] = r.PIDStart
		}
	}
	var details []string
	scan := func() (int, int, int) {
		details = details[:0]
		procs := 0
		for _, p := range liveProcs() {
			if where := s.escaped(p.pid); where != "" {
				procs++
				details = append(details, fmt.Sprintf("pid %d (%s) in group %d, %s", p.pid, cmdline(p.pid), p.pgrp, where))
				continue
			}
			start, ok := groups[p.pgrp]
			if !ok {
				continue
			}
			leader, alive := readProc(p.pgrp)
			if alive && leader.start != start {
				continue // the pgid was recycled for another group
			}
			procs++
			details = append(details, fmt.Sprintf("pid %d (%s) in group %d", p.pid, cmdline(p.pid), p.pgrp))
		}
		sups := 0
		for _, r := range recs {
			if r.Detached && r.SupervisorPID > 1 && isProcess(r.SupervisorPID, r.SupervisorStart) &&
				strings.Contains(cmdline(r.SupervisorPID), "__supervise") {
				sups++
				details = append(details, fmt.Sprintf("supervisor %d of job %s", r.SupervisorPID, r.ID))
			}
		}
		dirs := 0
		ents, _ := os.ReadDir(filepath.Join(s.h.dir, "jobs"))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") {
				continue // the runner's own bookkeeping (its reconcile lock)
			}
			dirs++
			what := "file"
			if e.IsDir() {
				what = "directory"
			}
			details = append(details, fmt.Sprintf("%s jobs/%s, which gc does not remove", what, e.Name()))
		}
		return procs, sups, dirs
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		f.LeftoverProcesses, f.LeftoverSupervisors, f.JobDirsLeft = scan()
		if f.LeftoverProcesses+f.LeftoverSupervisors+f.JobDirsLeft == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, d := range details {
		f.violate("left behind after the soak: %s", d)
	}
}

// escaped says why pid belongs to the soak's jobs although it may have left
// their process groups: its environment names the soak's home (every job
// inherits BGCMD_HOME; supervisors do not), or its working directory is
// under the soak's directories. "" when neither holds.
func (s *soaker) escaped(pid int) string {
	if pid == os.Getpid() {
		return ""
	}
	proc := "/proc/" + strconv.Itoa(pid)
	if env, err := os.ReadFile(proc + "/environ"); err == nil &&
		strings.Contains("\x00"+string(env), "\x00BGCMD_HOME="+s.h.dir+"\x00") {
		return "carries the soak's BGCMD_HOME"
	}
	if cwd, err := os.Readlink(proc + "/cwd"); err == nil {
		for _, d := range []string{s.h.root, s.h.dir} {
			if cwd == d || strings.HasPrefix(cwd, d+"/") {
				return "runs in " + cwd
			}
		}
	}
	return ""
}

// checkDatabase: PRAGMA integrity_check and foreign_key_check.
// On PostgreSQL the server keeps its own pages and constraints: there is
// no such check to run.
func (s *soaker) checkDatabase(ctx context.Context, f *soakFigures) {
	if s.h.db != "" {
		f.Integrity = "not applicable (PostgreSQL)"
		return
	}
	rows, err := queryStrings(ctx, s.ro, `PRAGMA integrity_check`)
	if err != nil {
		f.violate("integrity_check: %v", err)
		return
	}
	var parts []string
	for _, r := range rows {
		parts = append(parts, strings.Join(r, " "))
	}
	f.Integrity = strings.Join(parts, "; ")
	if f.Integrity != "ok" {
		f.violate("PRAGMA integrity_check: %s", f.Integrity)
	}
	fk, err := queryStrings(ctx, s.ro, `PRAGMA foreign_key_check`)
	if err != nil {
		f.violate("foreign_key_check: %v", err)
		return
	}
	f.ForeignKeyViolations = len(fk)
	if len(fk) > 0 {
		f.violate("PRAGMA foreign_key_check: %d rows", len(fk))
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// orphanedFrom returns the pid of the dead supervisor a reconciler took the
// job over from (0 when it was not orphaned that way).
func (s *soaker) orphanedFrom(ctx context.Context, id string) int {
	events, err := s.ro.Events(ctx, id)
	if err != nil || len(events) == 0 {
		return 0
	}
	pid, _ := events[len(events)-1].Detail["dead_supervisor_pid"].(float64)
	return int(pid)
}
