package gittools

import (
	"strconv"
	"strings"
)

// maxDisplay bounds a Result's Display (and the job's display label), in
// bytes; a longer one is cut and ends in "...".
const maxDisplay = 512

// displayLine renders a call in the CLI's words: "git log --ref main
// --max-count 50". fields are flag names (snake_case, as the JSON names) and
// values in order; empty values are left out, and a value that is not a
// plain word is quoted.
func displayLine(tool string, fields ...string) string {
	var b strings.Builder
	b.WriteString("git " + strings.ReplaceAll(strings.TrimPrefix(tool, "git_"), "_", "-"))
	for i := 0; i+1 < len(fields); i += 2 {
		name, v := fields[i], fields[i+1]
		if v == "" {
			continue
		}
		b.WriteString(" --" + strings.ReplaceAll(name, "_", "-"))
		if v != "\x00" { // a boolean flag
			b.WriteString(" " + displayWord(v))
		}
	}
	s := b.String()
	if len(s) > maxDisplay {
		cut := maxDisplay - 3
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// displayWord returns v as is when it is a plain word, else quoted.
func displayWord(v string) string {
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/:@^~+=,-", r)) {
			return strconv.Quote(v)
		}
	}
	return v
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// flagBool is a boolean flag's value for displayLine: set or left out.
func flagBool(b bool) string {
	if b {
		return "\x00"
	}
	return ""
}

// flagInt is a number's value for displayLine; zero is left out.
func flagInt(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func (a LogArgs) display() string {
	return displayLine(ToolLog, "ref", a.Ref, "path", a.Path, "max_count", flagInt(a.MaxCount),
		"since", a.Since, "until", a.Until, "author", a.Author)
}

func (a ShowArgs) display() string {
	return displayLine(ToolShow, "rev", a.Rev, "path", a.Path, "stat", flagBool(a.Stat))
}

func (a DiffArgs) display() string {
	fields := []string{"base", a.Base, "head", a.Head}
	for _, p := range a.Paths {
		fields = append(fields, "path", p)
	}
	fields = append(fields, "staged", flagBool(a.Staged), "stat", flagBool(a.Stat))
	if a.Context != nil {
		fields = append(fields, "context", strconv.Itoa(*a.Context))
	}
	return displayLine(ToolDiff, fields...)
}

func (a BlameArgs) display() string {
	return displayLine(ToolBlame, "path", a.Path, "rev", a.Rev,
		"start_line", flagInt(a.StartLine), "end_line", flagInt(a.EndLine))
}

func (a MergeBaseArgs) display() string {
	return displayLine(ToolMergeBase, "a", a.A, "b", a.B)
}

func (a LsFilesArgs) display() string {
	return displayLine(ToolLsFiles, "path", a.Path, "pattern", a.Pattern, "max_count", flagInt(a.MaxCount))
}
