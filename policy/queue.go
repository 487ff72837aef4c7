package policy

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Group is a named group of jobs with its own running limit (policy
// [groups.NAME]).
type Group struct {
	// MaxRunning bounds the group's running jobs on this host; 0 means no
	// limit (the group only labels its jobs).
	MaxRunning int
}

// groupName is what a group may be called: short, no spaces or controls.
var groupName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// CheckGroup refuses a start that names a group the policy does not define
// ("" selects none and always passes).
func CheckGroup(p *Policy, name string) error {
	if name == "" {
		return nil
	}
	if p != nil {
		if _, ok := p.Groups[name]; ok {
			return nil
		}
	}
	known := "none are defined"
	if p != nil && len(p.Groups) > 0 {
		names := make([]string, 0, len(p.Groups))
		for n := range p.Groups {
			names = append(names, n)
		}
		sort.Strings(names)
		known = "known groups: " + strings.Join(names, ", ")
	}
	return refuse(CodeUnknownGroup, "define it in the policy as [groups.NAME] with max_running = N, or leave --group out", nil,
		"group %q is not defined by the policy (%s)", name, known)
}

// queue reads the optional max_running (a non-negative integer) and the
// [groups.NAME] tables, each holding only max_running.
func (f *file) queue(raw map[string]any) (int, map[string]Group, error) {
	limit, err := f.maxRunning(raw, keyMaxRunning, keyMaxRunning)
	if err != nil {
		return 0, nil, err
	}
	v, ok := raw[keyGroups]
	if !ok {
		return limit, nil, nil
	}
	table, ok := v.(map[string]any)
	if !ok {
		return 0, nil, f.errorf(keyGroups, "must be tables like [groups.tests] with max_running = 2, not %s", tomlType(v))
	}
	groups := make(map[string]Group, len(table))
	for name, gv := range table {
		if !groupName.MatchString(name) {
			return 0, nil, f.errorf(keyGroups, "group name %q: use letters, digits, '_', '.' and '-' (at most 64, starting with a letter or digit)", name)
		}
		g, ok := gv.(map[string]any)
		if !ok {
			return 0, nil, f.errorf(keyGroups, "groups.%s must be a table with max_running = N, not %s", name, tomlType(gv))
		}
		for k := range g {
			if k != keyMaxRunning {
				return 0, nil, f.errorf(keyGroups, "groups.%s: unknown key %q (known keys: %s)", name, k, keyMaxRunning)
			}
		}
		n, err := f.maxRunning(g, keyMaxRunning, "groups."+name+"."+keyMaxRunning)
		if err != nil {
			return 0, nil, err
		}
		groups[name] = Group{MaxRunning: n}
	}
	return limit, groups, nil
}

// maxRunning reads an optional non-negative integer limit at key of raw,
// naming it as name in errors.
func (f *file) maxRunning(raw map[string]any, key, name string) (int, error) {
	v, ok := raw[key]
	if !ok {
		return 0, nil
	}
	errKey := name
	if i := strings.IndexByte(name, '.'); i >= 0 {
		errKey = name[:i]
	}
	n, ok := v.(int64)
	if !ok {
		return 0, f.errorf(errKey, "%s must be an integer number of jobs, not %s", name, tomlType(v))
	}
	if n < 0 || n > 1<<20 {
		return 0, f.errorf(errKey, "%s = %d: use 0 (no limit) up to %d", name, n, 1<<20)
	}
	return int(n), nil
}

// String describes the group for a message.
func (g Group) String() string { return fmt.Sprintf("max_running = %d", g.MaxRunning) }
