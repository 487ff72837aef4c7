package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/policy"
)

// stateText is a job's state as a person reads it: "exited 0",
// "exited SIGSEGV", "timeout", … and the colour it is shown in.
func stateText(state bgcmd.State, exitCode *int, signal string) cell {
	switch state {
	case bgcmd.StateRunning:
		return cell{"running", sgrCyan}
	case bgcmd.StateQueued:
		return cell{"queued", sgrCyan}
	case bgcmd.StateExited:
		switch {
		case exitCode != nil && *exitCode == 0:
			return cell{"exited 0", sgrGreen}
		case exitCode != nil:
			return cell{fmt.Sprintf("exited %d", *exitCode), sgrRed}
		case signal != "":
			return cell{"exited " + signal, sgrRed}
		}
		return cell{"exited", sgrRed}
	case bgcmd.StateKilled:
		return cell{"killed", sgrYellow}
	}
	return cell{string(state), sgrRed}
}

// commandLine renders argv for people: elements with spaces or quotes are
// quoted (display only: bgcmd never runs a shell).
func commandLine(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}~#") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts[i] = a
	}
	return oneLine(strings.Join(parts, " "))
}

// previewLines is how many lines of the tail preview status shows.
const previewLines = 10

// writeStatus renders a status for people.
func writeStatus(w io.Writer, st style, s *bgcmd.Status, now time.Time) error {
	var b strings.Builder
	row := func(key, value string) {
		fmt.Fprintf(&b, "%s  %s\n", st.paint(sgrBold, fmt.Sprintf("%-8s", key)), value)
	}
	// text is a row of a value bgcmd did not write: a job's cwd or exe may
	// hold what a terminal acts on (a directory an agent made).
	text := func(key, value string) { row(key, oneLine(value)) }
	state := stateText(s.State, s.ExitCode, s.Signal)
	text("job", s.ID)
	row("state", st.paint(state.sgr, state.text))
	row("command", commandLine(s.Argv))
	if s.Exe != "" && (len(s.Argv) == 0 || s.Exe != s.Argv[0]) {
		text("exe", s.Exe)
	}
	text("cwd", s.Cwd)
	if s.HostID != "" {
		text("host", fmt.Sprintf("%s (host id %s)", s.Host, s.HostID))
	}
	text("session", fmt.Sprintf("%s (%d running, %d queued, %d finished unread)", s.Session, s.Counters.Running, s.Counters.Queued, s.Counters.Finished))
	if s.Group != "" {
		text("group", s.Group)
	}
	if len(s.After) > 0 {
		text("after", strings.Join(s.After, " "))
	}
	if s.QueuePosition > 0 {
		row("queue", fmt.Sprintf("position %d", s.QueuePosition))
	}
	if s.RerunOf != "" {
		text("rerun of", s.RerunOf)
	}
	if len(s.Labels) > 0 {
		keys := make([]string, 0, len(s.Labels))
		for k := range s.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			keys[i] = k + "=" + s.Labels[k]
		}
		row("labels", oneLine(strings.Join(keys, " ")))
	}
	row("created", fmtAgo(s.CreatedAt, now))
	if s.StartedAt != nil {
		row("duration", fmtDuration(time.Duration(s.DurationMS)*time.Millisecond))
	}
	if s.PID != 0 {
		mode := "in-process supervisor"
		if s.Detached {
			mode = "detached supervisor"
		}
		row("pid", fmt.Sprintf("%d (group %d, %s %d)", s.PID, s.PGID, mode, s.SupervisorPID))
	}
	for _, x := range []struct {
		name string
		ss   bgcmd.StreamStatus
	}{{"stdout", s.Stdout}, {"stderr", s.Stderr}} {
		v := fmtBytes(x.ss.Bytes)
		if x.ss.Capped {
			v += " " + st.paint(sgrRed, "(capped)")
		}
		if x.ss.SHA256 != "" {
			v += "  " + st.paint(sgrDim, "sha256 "+x.ss.SHA256[:min(12, len(x.ss.SHA256))])
		}
		row(x.name, v)
	}
	if s.Usage != nil {
		row("usage", fmtUsage(s.Usage))
	}
	if l := s.Limits; l != nil {
		row("limits", fmtLimits(l))
	}
	if s.Error != "" {
		row("error", st.paint(sgrRed, oneLine(s.Error)))
	}
	if p := strings.TrimRight(strings.Replace(s.TailPreview, "\n\n[stderr]\n", "\n[stderr]\n", 1), "\n"); p != "" {
		lines := strings.Split(p, "\n")
		if len(lines) > previewLines {
			lines = lines[len(lines)-previewLines:]
		}
		b.WriteString(st.paint(sgrBold, "tail") + st.paint(sgrDim, " (bgcmd output "+s.ID+" for all of it)") + "\n")
		for _, l := range lines {
			b.WriteString("  " + oneLine(strings.ReplaceAll(l, "\t", "    ")) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fmtLimits renders a job's cgroup limits: "memory 512MiB, 200 processes".
func fmtLimits(l *bgcmd.ResourceLimits) string {
	var parts []string
	if l.MemoryMaxBytes > 0 {
		parts = append(parts, "memory "+policy.FormatSize(l.MemoryMaxBytes))
	}
	if l.PidsMax > 0 {
		parts = append(parts, fmt.Sprintf("%d processes", l.PidsMax))
	}
	return strings.Join(parts, ", ")
}

// fmtUsage renders a job's cost on one line: "cpu 1.25s user + 0.03s system,
// peak 212.4 MiB".
func fmtUsage(u *bgcmd.Usage) string {
	return fmt.Sprintf("cpu %.2fs user + %.2fs system, peak %s", float64(u.CPUUserMS)/1000,
		float64(u.CPUSystemMS)/1000, fmtBytes(u.MaxRSSKiB*1024))
}
