package policy

import (
	"path/filepath"
	"strings"
)

// checkHookArg refuses an on_settle element holding a NUL byte.
func checkHookArg(s string) error {
	if strings.ContainsRune(s, 0) {
		return errorString("an element contains a NUL byte")
	}
	return nil
}

// onSettle checks the decoded on_settle hook (an argv array whose first
// element is an absolute, clean path: it is never looked up on a search
// path and never run through a shell) against its timeout.
func (d *document) onSettle() error {
	argv := d.OnSettle.list
	if argv == nil {
		if d.OnSettleTimeout != 0 {
			return d.errorf(keyOnSettleTime, "is set but on_settle is not: add on_settle or remove it")
		}
		return nil
	}
	if len(argv) == 0 {
		return d.errorf(keyOnSettle, `is empty: give an argv like ["/usr/local/bin/notify", "--flag"], or leave the key out`)
	}
	if !filepath.IsAbs(argv[0]) || filepath.Clean(argv[0]) != argv[0] {
		return d.errorf(keyOnSettle, "the executable %q must be an absolute, clean path: the hook is never looked up on a search path", argv[0])
	}
	return nil
}
