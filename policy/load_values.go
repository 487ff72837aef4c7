package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// The value types below are the fields of a policy document. Each
// implements toml.Unmarshaler: the TOML library calls it with the decoded
// value, and an error it returns comes back as a toml.ParseError carrying
// the key and the library's position of it.

// stringList is an optional array of strings, each checked by check. A
// present key gives a non-nil list, even when the array is empty.
type stringList struct {
	check func(string) error
	list  []string
	// bad is the entry that failed check, so that the error can name the
	// entry's own line.
	bad string
}

// UnmarshalTOML checks that v is an array of strings that check accepts.
func (l *stringList) UnmarshalTOML(v any) error {
	arr, ok := v.([]any)
	if !ok {
		return fmt.Errorf("must be an array of strings, not %s", tomlType(v))
	}
	l.list = make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return fmt.Errorf("element %d must be a string, not %s", i, tomlType(e))
		}
		if err := l.check(s); err != nil {
			l.bad = s
			return err
		}
		l.list = append(l.list, s)
	}
	return nil
}

// durationValue is an optional positive Go duration string.
type durationValue time.Duration

// UnmarshalTOML checks that v is a positive Go duration string.
func (d *durationValue) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf(`must be a duration string like "2m" or "30s", not %s`, tomlType(v))
	}
	parsed, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf(`invalid duration %q: use a Go duration like "2m" or "30s"`, s)
	}
	if parsed <= 0 {
		return fmt.Errorf("duration %q must be positive (leave the key out for the default)", s)
	}
	*d = durationValue(parsed)
	return nil
}

// byteCount is an optional positive size: an integer number of bytes or
// a string with a unit ("50MiB"), as max_memory and `bgcmd run
// --max-output` take it (ParseSize).
type byteCount int64

// UnmarshalTOML checks that v is a positive size.
func (n *byteCount) UnmarshalTOML(v any) error {
	size, err := sizeValue(v, "the default")
	*n = byteCount(size)
	return err
}

// sizeValue reads a size key's value v: a positive integer number of
// bytes, or a string ParseSize reads. without says what leaving the key
// out means, for the message about a value that is not positive.
func sizeValue(v any, without string) (int64, error) {
	switch x := v.(type) {
	case int64:
		if x <= 0 {
			return 0, fmt.Errorf("%d must be positive (leave the key out for %s)", x, without)
		}
		return x, nil
	case string:
		return ParseSize(x)
	}
	return 0, fmt.Errorf(`must be a size like "512MiB" or "2GiB", or an integer number of bytes, not %s`, tomlType(v))
}

// searchPathValue is the optional search path: absolute directories
// separated by ':'.
type searchPathValue string

// UnmarshalTOML checks that v is a search path of absolute directories.
func (p *searchPathValue) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf(`must be a string of absolute directories separated by ':', like "/usr/bin:/bin", not %s`, tomlType(v))
	}
	if s == "" {
		return fmt.Errorf(`is empty: leave the key out for the default %q`, StandardPath)
	}
	if err := checkSearchPath(s); err != nil {
		return err
	}
	*p = searchPathValue(s)
	return nil
}

// cgroupValue is the optional cgroup v2 directory for per-job cgroups.
type cgroupValue string

// UnmarshalTOML checks that v names a writable cgroup v2 directory.
func (c *cgroupValue) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("must be a string, not %s", tomlType(v))
	}
	if err := checkCgroup(s); err != nil {
		return err
	}
	*c = cgroupValue(s)
	return nil
}

// rootValue is the required cwd_root: an existing directory, relative to
// dir (the policy file's directory) unless absolute. path is absolute but
// keeps its symlinks; Check resolves it each time.
type rootValue struct {
	dir  string
	path string
}

// UnmarshalTOML checks that v names an existing directory.
func (r *rootValue) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("must be a string, not %s", tomlType(v))
	}
	if s == "" || strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%q is not a directory path", s)
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(r.dir, s)
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return fmt.Errorf("%q cannot be made absolute: %v", s, err)
	}
	if _, err := resolveRoot(abs); err != nil {
		var pe *policyError
		if errors.As(err, &pe) {
			return errorString(pe.msg)
		}
		return err
	}
	r.path = abs
	return nil
}

// tomlType names the TOML type of a decoded value for a message.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	case time.Time:
		return "a datetime"
	}
	return fmt.Sprintf("%T", v)
}

// errorString is an error with fixed text.
type errorString string

func (e errorString) Error() string { return string(e) }
