package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
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
	keyMaxQueued      = "max_queued"
	keyGroups         = "groups"
	keyMaxMemory      = "max_memory"
	keyMaxProcesses   = "max_processes"
)

// knownKeys lists the policy file keys, sorted.
var knownKeys = []string{keyAllowed, keyAllowedEnv, keyCgroup, keyCwdRoot, keyDefaultTimeout, keyDeniedEnv, keyGroups, keyKillGrace, keyMaxMemory, keyMaxOutputBytes, keyMaxProcesses, keyMaxQueued, keyMaxRunning, keyMaxTimeout, keyOnSettle, keyOnSettleTime, keyPath}

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
//	max_memory = "2GiB"
//	max_processes = 512
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
// whose first element is an absolute path (see Policy.OnSettle).
// max_memory (a size: bytes, or a string with a unit) and max_processes need
// cgroup, with the memory and pids controllers available in it. Unknown
// keys, wrong types, bad values and syntax errors are *LoadError values that
// name the file, the key and the line.
func Parse(name string, data []byte) (*Policy, error) {
	d := &document{
		name:               name,
		data:               string(data),
		AllowedExecutables: stringList{check: checkEntry},
		AllowedEnv:         stringList{check: checkEnvPattern},
		DeniedEnv:          stringList{check: checkEnvPattern},
		OnSettle:           stringList{check: checkHookArg},
		CwdRoot:            rootValue{dir: filepath.Dir(name)},
	}
	md, err := toml.Decode(d.data, d)
	if err != nil {
		return nil, d.decodeError(err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return nil, d.errorf(undecoded[0][0], "unknown key (known keys: %s)", strings.Join(knownKeys, ", "))
	}
	// The TOML library takes a key for its field whatever its case, and
	// the last one written wins: "Cwd_Root" after "cwd_root" would widen
	// the policy silently. A key is only ever its own spelling.
	for _, k := range md.Keys() {
		if len(k) == 1 && !slices.Contains(knownKeys, k[0]) {
			return nil, d.errorf(k[0], "unknown key: keys are written in lower case, as %s (a key in another case would override it)",
				strings.ToLower(k[0]))
		}
	}
	if !md.IsDefined(keyCwdRoot) {
		return nil, &LoadError{File: name, Key: keyCwdRoot, Message: "missing: a policy needs a sandbox root directory"}
	}
	if err := d.onSettle(); err != nil {
		return nil, err
	}
	if err := d.resourceKeys(md.IsDefined); err != nil {
		return nil, err
	}
	p := &Policy{
		File:               name,
		AllowedExecutables: d.AllowedExecutables.list,
		AllowedEnv:         d.AllowedEnv.list,
		DeniedEnv:          d.DeniedEnv.list,
		Path:               string(d.Path),
		DefaultTimeout:     time.Duration(d.DefaultTimeout),
		MaxTimeout:         time.Duration(d.MaxTimeout),
		KillGrace:          time.Duration(d.KillGrace),
		MaxOutputBytes:     int64(d.MaxOutputBytes),
		CwdRoot:            d.CwdRoot.path,
		Cgroup:             string(d.Cgroup),
		OnSettle:           d.OnSettle.list,
		OnSettleTimeout:    time.Duration(d.OnSettleTimeout),
		MaxRunning:         int(d.MaxRunning),
		MaxQueued:          int(d.MaxQueued),
		MaxMemory:          int64(d.MaxMemory),
		MaxProcesses:       int(d.MaxProcesses),
	}
	if d.Groups != nil {
		p.Groups = map[string]Group(d.Groups)
	}
	if err := p.validateLimits(); err != nil {
		var pe *policyError
		if errors.As(err, &pe) {
			return nil, d.errorf(pe.key, "%s", pe.msg)
		}
		return nil, &LoadError{File: name, Message: err.Error(), Err: err}
	}
	return p, nil
}

// document is a policy file as the TOML library decodes it: one typed field
// per key, each checking its value as it is decoded (see load_values.go),
// plus the file's name and text for errors.
type document struct {
	name string
	data string

	AllowedExecutables stringList      `toml:"allowed_executables"`
	CwdRoot            rootValue       `toml:"cwd_root"`
	DefaultTimeout     durationValue   `toml:"default_timeout"`
	MaxTimeout         durationValue   `toml:"max_timeout"`
	KillGrace          durationValue   `toml:"kill_grace"`
	MaxOutputBytes     byteCount       `toml:"max_output_bytes"`
	Path               searchPathValue `toml:"path"`
	AllowedEnv         stringList      `toml:"allowed_env"`
	DeniedEnv          stringList      `toml:"denied_env"`
	Cgroup             cgroupValue     `toml:"cgroup"`
	OnSettle           stringList      `toml:"on_settle"`
	OnSettleTimeout    durationValue   `toml:"on_settle_timeout"`
	MaxRunning         runningLimit    `toml:"max_running"`
	MaxQueued          queueLimit      `toml:"max_queued"`
	Groups             groupsValue     `toml:"groups"`
	MaxMemory          memorySize      `toml:"max_memory"`
	MaxProcesses       processCount    `toml:"max_processes"`
}

// decodeError turns an error of toml.Decode into a *LoadError at the
// library's position. A value refused by its field's check names its key
// (and a refused list entry its own line); a syntax error names the key
// only when the failing line defines it, since the library's last key may
// be an earlier line's.
func (d *document) decodeError(err error) *LoadError {
	le := &LoadError{File: d.name, Message: err.Error(), Err: err}
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return le
	}
	le.Line, le.Message = pe.Position.Line, pe.Message
	key, _, _ := strings.Cut(pe.LastKey, ".")
	if _, syntax := toml.Decode(d.data, new(map[string]any)); syntax == nil {
		le.Key = key
		if bad := d.badEntry(key); bad != "" {
			le.Line = entryLine(d.data, le.Line, bad)
		}
		if le.Line == 0 {
			// The library gives a table's value (groups) no position: the
			// line is the first that defines its key.
			le.Line = firstDefinition(d.data, key)
		}
		return le
	}
	if key != "" && definesKey(lineAt(d.data, le.Line), key) {
		le.Key = key
	}
	return le
}

// badEntry returns the entry of the list key that its check refused, or "".
func (d *document) badEntry(key string) string {
	switch key {
	case keyAllowed:
		return d.AllowedExecutables.bad
	case keyAllowedEnv:
		return d.AllowedEnv.bad
	case keyDeniedEnv:
		return d.DeniedEnv.bad
	case keyOnSettle:
		return d.OnSettle.bad
	}
	return ""
}

// errorf returns a *LoadError for key at the line where the TOML library
// places it.
func (d *document) errorf(key, format string, args ...any) *LoadError {
	return &LoadError{File: d.name, Line: keyLine(d.data, key), Key: key, Message: fmt.Sprintf(format, args...)}
}

// keyProbe is a field whose decoding always fails, so that the TOML library
// reports the position of the key it is tagged with.
type keyProbe struct{}

// UnmarshalTOML fails, which makes the library report the key's position.
func (keyProbe) UnmarshalTOML(any) error { return errorString("probe") }

// keyLine returns the 1-based line where the TOML library places the
// top-level key of data (a "key =" line or a "[key]" header), or 0. The
// library keeps positions private except in its errors, so data is decoded
// into a struct whose one field, tagged key, fails.
func keyLine(data, key string) int {
	probe := reflect.New(reflect.StructOf([]reflect.StructField{{
		Name: "Probe",
		Type: reflect.TypeFor[keyProbe](),
		Tag:  reflect.StructTag(`toml:` + strconv.Quote(key)),
	}}))
	_, err := toml.Decode(data, probe.Interface())
	var pe toml.ParseError
	if errors.As(err, &pe) && pe.LastKey == key {
		return pe.Position.Line
	}
	// The library matched the key in another case first: the line that
	// writes it as given.
	for i, l := range strings.Split(data, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), key); ok && strings.HasPrefix(strings.TrimSpace(rest), "=") {
			return i + 1
		}
	}
	return 0
}

// lineAt returns the 1-based line n of data, or "".
func lineAt(data string, n int) string {
	lines := strings.Split(data, "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return lines[n-1]
}

// firstDefinition returns the 1-based line of data that first defines the
// top-level key (see definesKey), or 0.
func firstDefinition(data, key string) int {
	for i, line := range strings.Split(data, "\n") {
		if definesKey(line, key) {
			return i + 1
		}
	}
	return 0
}

// definesKey reports whether line defines the top-level key: "key =",
// "key.sub =", or a header "[key]", "[key.sub]" or "[[key]]".
func definesKey(line, key string) bool {
	s := strings.TrimSpace(line)
	if h, ok := strings.CutPrefix(s, "["); ok {
		h = strings.TrimSpace(strings.TrimPrefix(h, "["))
		rest, ok := cutKey(h, key)
		return ok && (strings.HasPrefix(rest, "]") || strings.HasPrefix(rest, "."))
	}
	rest, ok := cutKey(s, key)
	return ok && (strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, "."))
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
