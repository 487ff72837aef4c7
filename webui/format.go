package webui

import (
	"fmt"
	"html/template"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// funcs are the template helpers. None returns template.HTML: every value
// they give is escaped by html/template like any other.
var funcs = template.FuncMap{
	"argv":     argvText,
	"when":     when,
	"whenPtr":  whenPtr,
	"dur":      dur,
	"shortID":  shortID,
	"bytes":    humanBytes,
	"sortedKV": sortedKV,
	"clip":     clip,
}

// argvText shows argv as one line, quoting the arguments a reader could
// not otherwise tell apart (empty, with spaces, quotes or control bytes).
func argvText(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\r\"'\\") || strconv.Quote(a) != `"`+a+`"` {
			parts[i] = strconv.Quote(a)
		} else {
			parts[i] = a
		}
	}
	return strings.Join(parts, " ")
}

// clipRunes is how much of a command line the jobs table shows.
const clipRunes = 160

// clip shortens s to clipRunes characters, marking the cut with "…".
func clip(s string) string {
	r := []rune(s)
	if len(r) <= clipRunes {
		return s
	}
	return string(r[:clipRunes]) + "…"
}

// timeLayout is how the view shows a time: UTC, to the second.
const timeLayout = "2006-01-02 15:04:05Z"

func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format(timeLayout)
}

func whenPtr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return when(*t)
}

func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func shortID(id string) string {
	if len(id) > 13 {
		return id[:8] + "…" + id[len(id)-4:]
	}
	return id
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(n)/float64(div), "KMGTPE"[exp], n)
}

// kv is one key and its value, shown as text.
type kv struct{ Key, Value string }

// sortedKV lists a map's entries by key, values as text.
func sortedKV(m any) []kv {
	var out []kv
	switch x := m.(type) {
	case map[string]string:
		for k, v := range x {
			out = append(out, kv{k, v})
		}
	case map[string]any:
		for k, v := range x {
			out = append(out, kv{k, fmt.Sprint(v)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// badge is a job's state as a text label with a colour class; the text
// alone says everything the colour does.
type badge struct {
	Text  string
	Class string
}

func stateBadge(j *bgcmd.Job) badge {
	text := string(j.State)
	switch {
	case j.State == bgcmd.StateExited && j.ExitCode != nil:
		text = fmt.Sprintf("exited %d", *j.ExitCode)
	case j.State == bgcmd.StateExited && j.Signal != "":
		text = "exited by " + j.Signal
	}
	return badge{Text: text, Class: "o-" + string(jobstore.OutcomeOf(j))}
}
