package soak

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// soakFigures are the soak's results, printed and written as figures.
type soakFigures struct {
	Config        soakConfig
	Machine       string
	DriveTime     time.Duration
	JobsPerSecond float64

	Jobs    int
	ByKind  map[string]int
	ByMode  map[string]int
	ByState map[string]int

	HostKills, Restarts                         int64
	SupervisorKills, KillMisses, ReconcileRuns  int64
	Interrupted, InterruptedOrphaned            int
	InterruptedNatural, StartInterruptedNoLogs  int
	RunningAfterReconcile, TerminalEventsBad    int
	Events                                      int
	ExactStreams, PrefixStreams, PatternStreams int
	BytesVerified                               int64
	CLIReadBacks                                int
	Counters                                    []counterFigure
	LeftoverProcesses, LeftoverSupervisors      int
	JobDirsLeft                                 int
	StrayJobDirs, SettledJobDirs                int
	GCJobDirs, GCStrayFiles                     int
	FDsBefore, FDsAfter                         int
	Integrity                                   string
	ForeignKeyViolations                        int

	Violations []string
}

// counterFigure compares one session's counters with the truth.
type counterFigure struct {
	Session                 string
	Running, Finished       int // jobstore Counters
	SQLRunning, SQLFinished int // SQL over the table
	HarnessFinished         int // jobs the harness never read
	SeenMismatches          int
}

func (f *soakFigures) violate(format string, args ...any) {
	f.Violations = append(f.Violations, fmt.Sprintf(format, args...))
}

// markdown renders the figures (t.Log and the summary file).
func (f *soakFigures) markdown() string {
	var b strings.Builder
	status := "PASS: every invariant held"
	if len(f.Violations) > 0 {
		status = fmt.Sprintf("FAIL: %d violations", len(f.Violations))
	}
	fmt.Fprintf(&b, "# bgcmd soak figures\n\n")
	fmt.Fprintf(&b, "Written by `make soak` (TestSoak in `soak/`); do not edit by hand. %s.\n\n", status)
	fmt.Fprintf(&b, "Run: %d jobs issued (limit %d, %s), seed %d, %d at a time, %s, %s; jobs driven in %s (%.1f jobs/s).\n\n",
		f.Jobs, f.Config.jobs, f.Config.duration, f.Config.seed, f.Config.workers, f.Machine,
		time.Now().UTC().Format(time.RFC3339), f.DriveTime.Round(time.Millisecond), f.JobsPerSecond)
	b.WriteString("| invariant | figure |\n| --- | --- |\n")
	row := func(k, v string, args ...any) { fmt.Fprintf(&b, "| %s | %s |\n", k, fmt.Sprintf(v, args...)) }
	row("jobs by kind", "%s", fmtMap(f.ByKind))
	row("jobs by mode", "%s", fmtMap(f.ByMode))
	row("jobs by final state", "%s", fmtMap(f.ByState))
	row("hosts (`run --wait`) SIGKILLed", "%d (restarted as a new start: %d)", f.HostKills, f.Restarts)
	row("supervisors SIGKILLed", "%d (picks that had already settled: %d; `bgcmd reconcile` restarts: %d)", f.SupervisorKills, f.KillMisses, f.ReconcileRuns)
	row("interrupted jobs", "%d: %d orphaned with their partial output, %d settled with their true outcome (exit record or kill missed), %d killed before any log existed", f.Interrupted, f.InterruptedOrphaned, f.InterruptedNatural, f.StartInterruptedNoLogs)
	row("jobs left running after reconcile", "%d", f.RunningAfterReconcile)
	row("jobs without exactly one terminal event", "%d (%d events in all)", f.TerminalEventsBad, f.Events)
	row("streams byte-exact (sha256 = generator)", "%d", f.ExactStreams)
	row("streams checked as a prefix (timeouts, kills, orphans)", "%d", f.PrefixStreams)
	row("streams checked by pattern (grandchild pid)", "%d", f.PatternStreams)
	row("bytes verified", "%d (%.1f MiB)", f.BytesVerified, float64(f.BytesVerified)/(1<<20))
	row("streams read back through `bgcmd output`", "%d", f.CLIReadBacks)
	for _, c := range f.Counters {
		row("counters "+c.Session, "running %d, finished %d; SQL truth %d/%d; never read by the harness %d; seen_at mismatches %d",
			c.Running, c.Finished, c.SQLRunning, c.SQLFinished, c.HarnessFinished, c.SeenMismatches)
	}
	row("processes of job groups alive at the end", "%d", f.LeftoverProcesses)
	row("supervisors alive at the end", "%d", f.LeftoverSupervisors)
	row("job directories left by killed processes, removed by `bgcmd gc`", "%d of no job (host killed before its row), %d of settled jobs (killed between settle and cleanup); gc removed %d directories and %d stray artifact files", f.StrayJobDirs, f.SettledJobDirs, f.GCJobDirs, f.GCStrayFiles)
	row("entries left under jobs/ after gc", "%d", f.JobDirsLeft)
	row("harness open fds", "%d at the start, %d at the end", f.FDsBefore, f.FDsAfter)
	row("PRAGMA integrity_check", "%s (foreign_key_check rows: %d)", f.Integrity, f.ForeignKeyViolations)
	if len(f.Violations) > 0 {
		fmt.Fprintf(&b, "\n## Violations (%d)\n\n", len(f.Violations))
		for i, v := range f.Violations {
			if i == 100 {
				fmt.Fprintf(&b, "- … and %d more\n", len(f.Violations)-100)
				break
			}
			fmt.Fprintf(&b, "- %s\n", v)
		}
	}
	return b.String()
}

func (f *soakFigures) render() string { return f.markdown() }

func fmtMap(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
