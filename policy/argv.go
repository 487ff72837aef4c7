package policy

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// shellMeta are the characters a shell would interpret. argv[0] containing
// one (or whitespace) means a shell line was passed where argv belongs.
const shellMeta = ";|&$<>()`'\"*?[]{}~"

// shellNote is the part of every shell_syntax hint that explains why.
const shellNote = "argv is never run by a shell, so operators like &&, ||, | and ; " +
	"and expansions like $VAR, * and ~ are not supported: start chained or piped commands as separate commands"

// checkArgv refuses an empty argv, NUL bytes in any element, and a shell
// line in argv[0]. Later elements may contain anything: no shell sees them.
func checkArgv(argv []string) *Refusal {
	if len(argv) == 0 || argv[0] == "" {
		return refuse(CodeEmptyArgv, `pass the command as an array whose first element is an allowlisted executable, e.g. ["git","status"]`, nil,
			"argv is empty or argv[0] is the empty string: there is no command to run")
	}
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return refuse(CodeNulByte, "remove the NUL byte: a program cannot receive it in an argument", nil,
				"argv[%d] %q contains a NUL byte", i, a)
		}
	}
	if c, ok := shellChar(argv[0]); ok {
		return refuse(CodeShellSyntax, shellHint(argv), nil,
			"argv is not a shell line: argv[0] %q contains %s; it must be exactly one allowlisted executable", argv[0], describeChar(c))
	}
	return nil
}

// checkEntry reports why an allowlist entry could never match argv[0].
func checkEntry(e string) error {
	switch c, ok := shellChar(e); {
	case e == "":
		return fmt.Errorf("an entry is empty")
	case strings.IndexByte(e, 0) >= 0:
		return fmt.Errorf("entry %q contains a NUL byte", e)
	case ok:
		return fmt.Errorf("entry %q contains %s and can never match argv[0]", e, describeChar(c))
	}
	return nil
}

// shellChar returns the first whitespace or shell metacharacter in s.
func shellChar(s string) (rune, bool) {
	i := strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(shellMeta, r)
	})
	if i < 0 {
		return 0, false
	}
	return []rune(s[i:])[0], true
}

// describeChar names c for a message.
func describeChar(c rune) string {
	if unicode.IsSpace(c) {
		return fmt.Sprintf("whitespace (%q)", c)
	}
	return fmt.Sprintf("the shell character %q", c)
}

// shellHint shows how argv[0] would be split into an argv array: its words
// up to the first operator (or shell-quoted word), followed by the remaining
// argv elements when argv[0] held only words.
func shellHint(argv []string) string {
	var words []string
	cut := false
	for _, w := range strings.Fields(argv[0]) {
		if strings.ContainsAny(w, shellMeta) {
			cut = true
			break
		}
		words = append(words, w)
	}
	if len(words) == 0 {
		return "pass the executable alone as argv[0] and each argument as its own element; " + shellNote
	}
	if !cut {
		words = append(words, argv[1:]...)
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = strconv.Quote(w)
	}
	return "split it into one element per argument, e.g. [" + strings.Join(quoted, ",") + "]; " + shellNote
}
