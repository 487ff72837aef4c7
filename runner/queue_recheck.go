package runner

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/policy"
)

// A queued job waits in its holder, for as long as its dependencies and
// its group take, while the operator may tighten the policy, the file it
// names may be replaced, and (on a store shared by hosts) anyone who can
// write the store may change its row. The holder starts only what this
// host checked, as the policy stands when it starts: queuedCheck runs once
// a dispatch has released the job, before anything is spawned, and a job
// it refuses settles start_failed, saying why.

// queuedCheck is what a queued job's holder checks at its start.
type queuedCheck struct {
	// checked is the job as this host's policy checked it when it was
	// queued; nil skips the comparison with the row (a holder handed the
	// job by a bgcmd that did not send it).
	checked *bgcmd.Job
	// policyFile is the file the policy came from; the holder loads it
	// again. "" uses pol, a policy built in code (nil: no policy check).
	policyFile string
	pol        *policy.Policy
	// env is the child's environment, and envChecked the names of the
	// variables in it that the policy checked when the job was queued
	// (those the caller set); they are checked again.
	env, envChecked []string
	// cwd is the working directory opened when the job was queued.
	cwd *os.File
	// digests is the home's cache of executables' digests, which saves
	// reading an unchanged file again.
	digests exeDigests
}

// check returns why row, the job as the dispatch released it, must not
// start, or nil.
func (q *queuedCheck) check(row *bgcmd.Job) error {
	job := row
	if q.checked != nil {
		if field := changedField(q.checked, row); field != "" {
			return fmt.Errorf("its row's %s changed while it was queued, so what would run is not what this host's policy checked: "+
				"start it again (bgcmd rerun) to have it checked", field)
		}
		job = q.checked
	}
	pol := q.pol
	if q.policyFile != "" {
		var err error
		if pol, err = policy.Load(q.policyFile); err != nil {
			return fmt.Errorf("the policy it was queued under no longer loads, so it did not start: %w", err)
		}
	}
	if pol != nil {
		if err := recheckPolicy(pol, job, q.cwd); err != nil {
			return err
		}
		if err := recheckEnv(pol, q.env, q.envChecked); err != nil {
			return err
		}
	}
	if sum := hashExecutable(job.Exe, q.digests); sum != job.ExeSHA256 {
		return fmt.Errorf("%s changed while the job was queued (sha256 %s when queued, %s now), and a job records the file it ran: "+
			"start it again (bgcmd rerun) to run the file there now", job.Exe, orNone(job.ExeSHA256), orNone(sum))
	}
	return nil
}

// recheckPolicy checks job against pol as a new start of the same command
// in the directory cwd (as it is named now) with the same limits. The
// environment is recheckEnv's: its values were never stored, and only the
// holder has them.
func recheckPolicy(pol *policy.Policy, job *bgcmd.Job, cwd *os.File) error {
	dir := job.Cwd
	if cwd != nil {
		var err error
		if dir, err = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(cwd.Fd()))); err != nil {
			return fmt.Errorf("its working directory: %w", err)
		}
	}
	req := policy.Request{Argv: job.Argv, Cwd: dir, Timeout: job.Timeout, MaxOutputBytes: job.MaxOutputBytes}
	if rl := job.ResourceLimits; rl != nil {
		req.MaxMemory, req.MaxProcesses = rl.MemoryMaxBytes, rl.PidsMax
	}
	dec, err := policy.Check(pol, req)
	if err != nil {
		return notAllowedNow(err)
	}
	dec.Close()
	if dec.Exe != job.Exe {
		return fmt.Errorf("%s now resolves to %s, not the %s checked when it was queued, so it did not start", job.Argv[0], dec.Exe, job.Exe)
	}
	return nil
}

// recheckEnv checks again, under pol, each variable of env that the
// policy checked when the job was queued (checked, by name). A checked
// name missing from env is refused too: what runs would not be what was
// checked.
func recheckEnv(pol *policy.Policy, env, checked []string) error {
	for _, name := range checked {
		i := slices.IndexFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
		if i < 0 {
			return fmt.Errorf("its environment lacks %s, which was checked when it was queued, so it did not start", name)
		}
		if err := pol.CheckEnvVar(name, env[i][len(name)+1:]); err != nil {
			return notAllowedNow(err)
		}
	}
	return nil
}

// notAllowedNow is the error of a queued job that the policy, checked
// again at its start, refuses: the refusal's code and message when err is
// one.
func notAllowedNow(err error) error {
	var ref *policy.Refusal
	if errors.As(err, &ref) {
		return fmt.Errorf("the policy no longer allows it (%s: %s), so it did not start", ref.Code, ref.Message)
	}
	return fmt.Errorf("the policy no longer allows it, so it did not start: %w", err)
}

// changedField names the first field that decides what runs, and how,
// where row differs from checked, or returns "". Durations compare in the
// milliseconds a row keeps.
func changedField(checked, row *bgcmd.Job) string {
	ms := func(j *bgcmd.Job) [2]int64 { return [2]int64{j.Timeout.Milliseconds(), j.KillGrace.Milliseconds()} }
	limits := func(j *bgcmd.Job) bgcmd.ResourceLimits {
		if j.ResourceLimits == nil {
			return bgcmd.ResourceLimits{}
		}
		return *j.ResourceLimits
	}
	for _, f := range []struct {
		name string
		same bool
	}{
		{"argv", slices.Equal(checked.Argv, row.Argv)},
		{"executable", checked.Exe == row.Exe && checked.ExeSHA256 == row.ExeSHA256},
		{"working directory", checked.Cwd == row.Cwd},
		{"environment", checked.EnvReplaced == row.EnvReplaced && slices.Equal(checked.EnvNames, row.EnvNames)},
		{"timeout", ms(checked) == ms(row)},
		{"output limit", checked.MaxOutputBytes == row.MaxOutputBytes},
		{"resource limits", limits(checked) == limits(row)},
		{"session", checked.Session == row.Session},
	} {
		if !f.same {
			return f.name
		}
	}
	return ""
}

func orNone(sum string) string {
	if sum == "" {
		return "none"
	}
	return sum
}
