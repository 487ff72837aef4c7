package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether w is a terminal (a character device that
// answers the terminal ioctl).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// termWidth returns w's width in columns, or 0 when it is not a terminal.
func termWidth(w any) int {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

// noColor reports whether the environment forbids colour: NO_COLOR set to
// anything but the empty string (https://no-color.org), or TERM=dumb.
func noColor() bool {
	return os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb"
}

// style paints text with ANSI colours when on is set, and leaves it alone
// otherwise: colour only on a terminal and never with NO_COLOR.
type style struct{ on bool }

// styleFor returns the style for output written to w.
func styleFor(w io.Writer) style { return style{on: isTerminal(w) && !noColor()} }

// The colours used, as SGR parameters.
const (
	sgrBold   = "1"
	sgrDim    = "2"
	sgrRed    = "31"
	sgrGreen  = "32"
	sgrYellow = "33"
	sgrCyan   = "36"
)

// paint wraps text in the SGR code when the style is on.
func (s style) paint(sgr, text string) string {
	if !s.on || sgr == "" || text == "" {
		return text
	}
	return "\x1b[" + sgr + "m" + text + "\x1b[0m"
}

// truncate shortens s to at most n characters, marking the cut with "…".
func truncate(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	if n == 1 {
		return "…"
	}
	return string(r[:n-1]) + "…"
}

// oneLine replaces control characters (newlines, tabs, escapes, the C1
// controls some terminals act on) and the marks that reorder text
// (bidirectional overrides) with visible escapes, so a value never breaks
// a table, moves the cursor or shows its characters in another order.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case isControl(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isControl says whether oneLine escapes r: C0 and C1 controls, DEL, and
// the bidirectional marks, embeddings, overrides and isolates.
func isControl(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x061c || r == 0x200e || r == 0x200f ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}
