package policy

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Group is a named group of jobs with its own running limit (policy
// [groups.NAME]).
type Group struct {
	// MaxRunning bounds the group's running jobs on this host; 0 means no
	// limit (the group only labels its jobs).
	MaxRunning int
}

// groupName is what a group may be called: short, no spaces or controls.
// It is compiled at its first use, not at start-up: the counted repeat
// makes a large program, which every bgcmd process (each run, each
// detached supervisor) would otherwise build before main.
var groupName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
})

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

// runningLimit is an optional max_running: 0 (no limit) up to 1<<20 jobs.
type runningLimit int

// UnmarshalTOML checks that v is an integer in range.
func (n *runningLimit) UnmarshalTOML(v any) error {
	i, err := runningLimitOf(v, keyMaxRunning)
	*n = runningLimit(i)
	return err
}

// runningLimitOf checks one max_running value, named name in errors.
func runningLimitOf(v any, name string) (int, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("%s must be an integer number of jobs, not %s", name, tomlType(v))
	}
	if n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("%s = %d: use 0 (no limit) up to %d", name, n, 1<<20)
	}
	return int(n), nil
}

// queueLimit is an optional max_queued: 1 up to 1<<20 jobs (absent:
// StandardMaxQueued).
type queueLimit int

// UnmarshalTOML checks that v is an integer in range.
func (n *queueLimit) UnmarshalTOML(v any) error {
	i, ok := v.(int64)
	if !ok {
		return fmt.Errorf("%s must be an integer number of jobs, not %s", keyMaxQueued, tomlType(v))
	}
	if i < 1 || i > 1<<20 {
		return fmt.Errorf("%s = %d: use 1 up to %d (leave it out for %d)", keyMaxQueued, i, 1<<20, StandardMaxQueued)
	}
	*n = queueLimit(i)
	return nil
}

// groupsValue is the optional [groups.NAME] tables, each holding only
// max_running.
type groupsValue map[string]Group

// UnmarshalTOML checks every group's name and table.
func (g *groupsValue) UnmarshalTOML(v any) error {
	table, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("must be tables like [groups.tests] with max_running = 2, not %s", tomlType(v))
	}
	groups := make(groupsValue, len(table))
	for name, gv := range table {
		if !groupName().MatchString(name) {
			return fmt.Errorf("group name %q: use letters, digits, '_', '.' and '-' (at most 64, starting with a letter or digit)", name)
		}
		t, ok := gv.(map[string]any)
		if !ok {
			return fmt.Errorf("groups.%s must be a table with max_running = N, not %s", name, tomlType(gv))
		}
		var group Group
		for k, val := range t {
			if k != keyMaxRunning {
				return fmt.Errorf("groups.%s: unknown key %q (known keys: %s)", name, k, keyMaxRunning)
			}
			n, err := runningLimitOf(val, "groups."+name+"."+keyMaxRunning)
			if err != nil {
				return err
			}
			group.MaxRunning = n
		}
		groups[name] = group
	}
	*g = groups
	return nil
}

// String describes the group for a message.
func (g Group) String() string { return fmt.Sprintf("max_running = %d", g.MaxRunning) }
