package policy

import (
	"path/filepath"
	"strings"
	"time"
)

// onSettle reads the optional on_settle hook (an argv array whose first
// element is an absolute, clean path: it is never looked up on a search
// path and never run through a shell) and its timeout.
func (f *file) onSettle(raw map[string]any) ([]string, time.Duration, error) {
	argv, err := f.strings(raw, keyOnSettle, func(s string) error {
		if strings.ContainsRune(s, 0) {
			return errorString("an element contains a NUL byte")
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	timeout, err := f.duration(raw, keyOnSettleTime)
	if err != nil {
		return nil, 0, err
	}
	if argv == nil {
		if timeout != 0 {
			return nil, 0, f.errorf(keyOnSettleTime, "is set but on_settle is not: add on_settle or remove it")
		}
		return nil, 0, nil
	}
	if len(argv) == 0 {
		return nil, 0, f.errorf(keyOnSettle, `is empty: give an argv like ["/usr/local/bin/notify", "--flag"], or leave the key out`)
	}
	if !filepath.IsAbs(argv[0]) || filepath.Clean(argv[0]) != argv[0] {
		return nil, 0, f.errorf(keyOnSettle, "the executable %q must be an absolute, clean path: the hook is never looked up on a search path", argv[0])
	}
	return argv, timeout, nil
}

// errorString is an error with fixed text.
type errorString string

func (e errorString) Error() string { return string(e) }
