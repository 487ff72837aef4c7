package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// The keys a policy file may hold.
const (
	keyAllowed        = "allowed_executables"
	keyCwdRoot        = "cwd_root"
	keyDefaultTimeout = "default_timeout"
	keyMaxTimeout     = "max_timeout"
	keyKillGrace      = "kill_grace"
	keyMaxOutputBytes = "max_output_bytes"
	keyPath           = "path"
	keyAllowedEnv     = "allowed_env"
	keyDeniedEnv      = "denied_env"
	keyCgroup         = "cgroup"
	keyOnSettle       = "on_settle"
	keyOnSettleTime   = "on_settle_timeout"
	keyMaxRunning     = "max_running"
	keyGroups         = "groups"
)

// knownKeys lists the policy file keys, sorted.
var knownKeys = []string{keyAllowed, keyAllowedEnv, keyCgroup, keyCwdRoot, keyDefaultTimeout, keyDeniedEnv, keyGroups, keyKillGrace, keyMaxOutputBytes, keyMaxRunning, keyMaxTimeout, keyOnSettle, keyOnSettleTime, keyPath}

// LoadError is a policy file that cannot be used. It names the file and,
// when known, the key and the 1-based line.
type LoadError struct {
	File string
	// Line is 1-based; 0 when no line applies (a missing key, an unreadable
	// file).
	Line int
	// Key is the top-level key at fault; "" when the error is not about one
	// key (a syntax error outside any key, an unreadable file).
	Key     string
	Message string
	// Err is the underlying cause (a read or TOML parse error), if any.
	Err error
}

// Error returns "file:line: key K: message", leaving out the parts that do
// not apply.
func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		fmt.Fprintf(&b, "key %s: ", e.Key)
	}
	b.WriteString(e.Message)
	return b.String()
}

// Unwrap returns the underlying cause, or nil.
func (e *LoadError) Unwrap() error { return e.Err }

// Load reads the TOML policy file at path. See Parse for the format; a
// relative cwd_root resolves against the file's directory. Every error is a
// *LoadError naming the file.
func Load(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		msg := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return nil, &LoadError{File: path, Message: "cannot read the policy file: " + msg, Err: err}
	}
	return Parse(path, data)
}

// Parse parses a TOML policy named name (used in errors, and whose directory
// a relative cwd_root resolves against):
//
//	allowed_executables = ["/usr/bin/git", "/usr/bin/make"]
//	cwd_root = "/srv/checkout"
//	default_timeout = "2m"
//	max_timeout = "30m"
//	kill_grace = "5s"
//	max_output_bytes = 10485760
//	path = "/usr/local/bin:/usr/bin:/bin"
//	allowed_env = ["LANG", "LC_*", "CI"]
//	denied_env = ["AWS_*"]
//	on_settle = ["/usr/local/bin/notify-build", "--channel", "ci"]
//	on_settle_timeout = "10s"
//	max_running = 8
//
//	[groups.tests]
//	max_running = 2
//
// cwd_root is required and must be an existing directory; every other key
// is optional (zero means the default, see Policy). Durations are Go
// duration strings and must be positive, as must max_output_bytes. path is
// the search path for bare allowlisted names (absolute directories separated
// by ':'); allowed_env and denied_env hold variable names or path.Match
// globs (see Policy.AllowedEnv and Policy.DeniedEnv). on_settle is an argv
// whose first element is an absolute path (see Policy.OnSettle). Unknown
// keys, wrong types, bad values and syntax errors are *LoadError values that
// name the file, the key and the line.
func Parse(name string, data []byte) (*Policy, error) {
	var raw map[string]any
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		le := &LoadError{File: name, Message: err.Error(), Err: err}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			le.Line, le.Message = pe.Position.Line, pe.Message
			// The library's last key may be an earlier line's; name it only
			// when it is defined on the failing line.
			if k, _, _ := strings.Cut(pe.LastKey, "."); k != "" && slices.Contains(keyLines(string(data), k), le.Line) {
				le.Key = k
			}
		}
		return nil, le
	}
	f := &file{name: name, data: string(data)}
	for _, k := range md.Keys() {
		if len(k) == 1 && !slices.Contains(knownKeys, k[0]) {
			return nil, f.errorf(k[0], "unknown key (known keys: %s)", strings.Join(knownKeys, ", "))
		}
	}
	p := &Policy{File: name}
	if p.AllowedExecutables, err = f.strings(raw, keyAllowed, checkEntry); err != nil {
		return nil, err
	}
	if p.AllowedEnv, err = f.strings(raw, keyAllowedEnv, checkEnvPattern); err != nil {
		return nil, err
	}
	if p.DeniedEnv, err = f.strings(raw, keyDeniedEnv, checkEnvPattern); err != nil {
		return nil, err
	}
	if p.Path, err = f.searchPath(raw); err != nil {
		return nil, err
	}
	if p.DefaultTimeout, err = f.duration(raw, keyDefaultTimeout); err != nil {
		return nil, err
	}
	if p.MaxTimeout, err = f.duration(raw, keyMaxTimeout); err != nil {
		return nil, err
	}
	if p.KillGrace, err = f.duration(raw, keyKillGrace); err != nil {
		return nil, err
	}
	if p.MaxOutputBytes, err = f.positiveInt(raw, keyMaxOutputBytes); err != nil {
		return nil, err
	}
	if p.CwdRoot, err = f.root(raw); err != nil {
		return nil, err
	}
	if p.Cgroup, err = f.cgroup(raw); err != nil {
		return nil, err
	}
	if p.OnSettle, p.OnSettleTimeout, err = f.onSettle(raw); err != nil {
		return nil, err
	}
	if p.MaxRunning, p.Groups, err = f.queue(raw); err != nil {
		return nil, err
	}
	if err := p.validateLimits(); err != nil {
		var pe *policyError
		if errors.As(err, &pe) {
			return nil, f.errorf(pe.key, "%s", pe.msg)
		}
		return nil, &LoadError{File: name, Message: err.Error(), Err: err}
	}
	return p, nil
}

// file is a policy file being parsed: its name for errors and its text for
// finding a key's line.
type file struct {
	name string
	data string
}

// errorf returns a *LoadError for key, at the key's line.
func (f *file) errorf(key, format string, args ...any) *LoadError {
	return &LoadError{File: f.name, Line: keyLine(f.data, key), Key: key, Message: fmt.Sprintf(format, args...)}
}

// strings reads an optional array of string entries, each checked by check.
// A present key gives a non-nil slice, even when the array is empty.
func (f *file) strings(raw map[string]any, key string, check func(string) error) ([]string, error) {
	v, ok := raw[key]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, f.errorf(key, "must be an array of strings, not %s", tomlType(v))
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, f.errorf(key, "element %d must be a string, not %s", i, tomlType(e))
		}
		if err := check(s); err != nil {
			le := f.errorf(key, "%v", err)
			if s != "" {
				le.Line = entryLine(f.data, le.Line, s)
			}
			return nil, le
		}
		out = append(out, s)
	}
	return out, nil
}

// searchPath reads the optional search path: absolute directories
// separated by ':'.
func (f *file) searchPath(raw map[string]any) (string, error) {
	v, ok := raw[keyPath]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", f.errorf(keyPath, `must be a string of absolute directories separated by ':', like "/usr/bin:/bin", not %s`, tomlType(v))
	}
	if s == "" {
		return "", f.errorf(keyPath, `is empty: leave the key out for the default %q`, StandardPath)
	}
	if err := checkSearchPath(s); err != nil {
		return "", f.errorf(keyPath, "%v", err)
	}
	return s, nil
}

// duration reads an optional positive Go duration string.
func (f *file) duration(raw map[string]any, key string) (time.Duration, error) {
	v, ok := raw[key]
	if !ok {
		return 0, nil
	}
	s, ok := v.(string)
	if !ok {
		return 0, f.errorf(key, `must be a duration string like "2m" or "30s", not %s`, tomlType(v))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, f.errorf(key, `invalid duration %q: use a Go duration like "2m" or "30s"`, s)
	}
	if d <= 0 {
		return 0, f.errorf(key, "duration %q must be positive (leave the key out for the default)", s)
	}
	return d, nil
}

// positiveInt reads an optional positive integer.
func (f *file) positiveInt(raw map[string]any, key string) (int64, error) {
	v, ok := raw[key]
	if !ok {
		return 0, nil
	}
	n, ok := v.(int64)
	if !ok {
		return 0, f.errorf(key, "must be an integer number of bytes, not %s", tomlType(v))
	}
	if n <= 0 {
		return 0, f.errorf(key, "%d must be positive (leave the key out for the default)", n)
	}
	return n, nil
}

// root reads the required cwd_root: an existing directory, relative to the
// file's directory unless absolute. The returned path is absolute but keeps
// its symlinks; Check resolves it each time.
func (f *file) root(raw map[string]any) (string, error) {
	v, ok := raw[keyCwdRoot]
	if !ok {
		return "", &LoadError{File: f.name, Key: keyCwdRoot, Message: "missing: a policy needs a sandbox root directory"}
	}
	s, ok := v.(string)
	if !ok {
		return "", f.errorf(keyCwdRoot, "must be a string, not %s", tomlType(v))
	}
	if s == "" || strings.IndexByte(s, 0) >= 0 {
		return "", f.errorf(keyCwdRoot, "%q is not a directory path", s)
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(filepath.Dir(f.name), s)
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return "", f.errorf(keyCwdRoot, "%q cannot be made absolute: %v", s, err)
	}
	if _, err := resolveRoot(abs); err != nil {
		var pe *policyError
		if errors.As(err, &pe) {
			return "", f.errorf(keyCwdRoot, "%s", pe.msg)
		}
		return "", f.errorf(keyCwdRoot, "%v", err)
	}
	return abs, nil
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

// keyLine returns the 1-based line where the top-level key is first
// defined, or 0.
func keyLine(data, key string) int {
	if lines := keyLines(data, key); len(lines) > 0 {
		return lines[0]
	}
	return 0
}

// keyLines returns the 1-based lines that define the top-level key. The
// TOML library keeps key positions private, so the text is scanned: a line
// "key =" or "key.sub =" before the first table header, or a header "[key]",
// "[key.sub]" or "[[key]]".
func keyLines(data, key string) []int {
	var found []int
	inTable := false
	for i, line := range strings.Split(data, "\n") {
		s := strings.TrimSpace(line)
		if h, ok := strings.CutPrefix(s, "["); ok {
			inTable = true
			h = strings.TrimSpace(strings.TrimPrefix(h, "["))
			if rest, ok := cutKey(h, key); ok && (strings.HasPrefix(rest, "]") || strings.HasPrefix(rest, ".")) {
				found = append(found, i+1)
			}
			continue
		}
		if inTable {
			continue
		}
		if rest, ok := cutKey(s, key); ok && (strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, ".")) {
			found = append(found, i+1)
		}
	}
	return found
}

// cutKey removes key, bare or quoted, from the start of s and the blanks
// after it.
func cutKey(s, key string) (string, bool) {
	for _, k := range []string{key, `"` + key + `"`, `'` + key + `'`} {
		if rest, ok := strings.CutPrefix(s, k); ok {
			return strings.TrimLeft(rest, " \t"), true
		}
	}
	return "", false
}

// entryLine returns the line, from the 1-based line from on, holding the
// string entry quoted, or from when no such line is found (an entry written
// with escapes, or a key whose line is unknown).
func entryLine(data string, from int, entry string) int {
	if from < 1 {
		return from
	}
	lines := strings.Split(data, "\n")
	for i := from - 1; i < len(lines); i++ {
		if strings.Contains(lines[i], `"`+entry+`"`) || strings.Contains(lines[i], `'`+entry+`'`) {
			return i + 1
		}
	}
	return from
}
