package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bgcmd/bgcmd/policy"
)

// fmtDuration renders d the way people read it: 350ms, 1.2s, 3m04s, 2h03m,
// 3d04h.
func fmtDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + fmtDuration(-d)
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", math.Floor(d.Seconds()*10)/10)
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// fmtBytes renders n bytes in binary units: 512 B, 3.4 KiB, 12 MiB.
func fmtBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	for _, unit := range []string{"KiB", "MiB", "GiB", "TiB"} {
		v /= 1024
		if v < 1024 || unit == "TiB" {
			if v < 10 {
				return fmt.Sprintf("%.1f %s", v, unit)
			}
			return fmt.Sprintf("%d %s", int64(v), unit)
		}
	}
	return "" // unreachable
}

// fmtAgo renders when t was, relative to now for the last day and as a
// local date and time before that.
func fmtAgo(t, now time.Time) string {
	switch d := now.Sub(t); {
	case d < 0:
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < 24*time.Hour:
		return fmtDuration(d) + " ago"
	}
	return t.Local().Format("2006-01-02 15:04")
}

// parseSize parses a byte size for flag (policy.ParseSize: 1048576,
// 512KiB, 10MiB, 1.5G, 20MB; at least one byte). Errors are usage errors
// naming the flag.
func parseSize(flag, s string) (int64, error) {
	n, err := policy.ParseSize(s)
	if err != nil {
		return 0, &usageError{fmt.Errorf("%s %w", flag, err)}
	}
	return n, nil
}

// parseDuration parses a Go duration for flag (90s, 5m, 1h30m). It must not
// be negative; a bare number has no unit and is refused with a hint.
func parseDuration(flag, s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		hint := "want a duration such as 90s, 5m or 1h30m"
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			hint = fmt.Sprintf("a duration needs a unit, e.g. %ss", s)
		}
		return 0, &usageError{fmt.Errorf("%s %q: %s", flag, s, hint)}
	}
	if d < 0 {
		return 0, &usageError{fmt.Errorf("%s %q: must not be negative", flag, s)}
	}
	return d, nil
}

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// cell is one table cell: its text and the colour it is painted in.
type cell struct {
	text string
	sgr  string
}

// table renders aligned columns: two spaces apart, the last column not
// padded and, on a terminal, cut to the terminal's width.
type table struct {
	header []string
	rows   [][]cell
}

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

// write renders the table to w in style st; width 0 means no limit.
func (t *table) write(w io.Writer, st style, width int) error {
	cols := len(t.header)
	widths := make([]int, cols)
	for i, h := range t.header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	var b strings.Builder
	line := func(cells []cell) {
		used := 0
		for i, c := range cells {
			text := c.text
			if i == cols-1 {
				if width > 0 {
					text = truncate(text, width-used)
				}
				b.WriteString(st.paint(c.sgr, text))
				break
			}
			pad := widths[i] - utf8.RuneCountInString(text)
			b.WriteString(st.paint(c.sgr, text))
			b.WriteString(strings.Repeat(" ", pad+2))
			used += widths[i] + 2
		}
		b.WriteString("\n")
	}
	head := make([]cell, cols)
	for i, h := range t.header {
		head[i] = cell{h, sgrBold}
	}
	line(head)
	for _, r := range t.rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
