package policy

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxProcessesCeiling is the largest max_processes a policy or a start may
// set: the kernel's own bound on pid numbers (pid_max at most 2^22).
const MaxProcessesCeiling = 1 << 22

// sizeUnits maps a size suffix (lower case) to its multiplier: B and no
// suffix are bytes; K, M, G, T and KiB, MiB, GiB, TiB are powers of 1024;
// KB, MB, GB, TB are powers of 1000.
var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// ParseSize parses a byte size: plain bytes ("1048576") or a number with a
// unit ("512MiB", "2GiB", "1.5G", "20MB"; K, M, G, T and KiB… are powers of
// 1024, KB, MB… powers of 1000). The result is a whole number of bytes, at
// least one.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || num == "" {
		return 0, fmt.Errorf("%q is not a size: use bytes or a unit, like 536870912, \"512MiB\" or \"2GiB\"", s)
	}
	n := v * mult
	if n < 1 || n > math.MaxInt64/2 || n != math.Trunc(n) {
		return 0, fmt.Errorf("%q is not a whole number of bytes of at least 1", s)
	}
	return int64(n), nil
}

// FormatSize writes n bytes for a message: in the largest binary unit that
// divides it ("512MiB"), else in bytes.
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// memorySize is the optional max_memory: a positive size, given as an
// integer number of bytes or a string with a unit.
type memorySize int64

// UnmarshalTOML checks that v is a positive size.
func (m *memorySize) UnmarshalTOML(v any) error {
	n, err := sizeValue(v, "no limit")
	*m = memorySize(n)
	return err
}

// processCount is the optional max_processes: 1 up to
// MaxProcessesCeiling.
type processCount int

// UnmarshalTOML checks that v is an integer in range.
func (n *processCount) UnmarshalTOML(v any) error {
	i, ok := v.(int64)
	if !ok {
		return fmt.Errorf("must be an integer number of processes, not %s", tomlType(v))
	}
	if i < 1 || i > MaxProcessesCeiling {
		return fmt.Errorf("%d: use 1 up to %d (leave the key out for no limit)", i, MaxProcessesCeiling)
	}
	*n = processCount(i)
	return nil
}

// resourceKeys refuses max_memory and max_processes that no cgroup can
// enforce: without the cgroup key, or with a cgroup whose memory or pids
// controller is not available. A limit is never silently ignored.
func (d *document) resourceKeys(defined func(key ...string) bool) error {
	for _, k := range []struct{ key, controller string }{
		{keyMaxMemory, "memory"}, {keyMaxProcesses, "pids"},
	} {
		if !defined(k.key) {
			continue
		}
		if !defined(keyCgroup) {
			return d.errorf(k.key, `needs a cgroup to be enforced, and this policy has none: set cgroup = "/sys/fs/cgroup/…" (a delegated cgroup v2 directory) or remove %s`, k.key)
		}
		if err := checkController(string(d.Cgroup), k.controller); err != nil {
			return d.errorf(k.key, "cannot be enforced: %v; or remove %s", err, k.key)
		}
	}
	return nil
}

// validateResources checks the cgroup limits of a policy built in code.
func (p *Policy) validateResources() error {
	switch {
	case p.MaxMemory < 0:
		return &policyError{keyMaxMemory, fmt.Sprintf("%d is negative", p.MaxMemory)}
	case p.MaxProcesses < 0 || p.MaxProcesses > MaxProcessesCeiling:
		return &policyError{keyMaxProcesses, fmt.Sprintf("%d is not in 0 (no limit) up to %d", p.MaxProcesses, MaxProcessesCeiling)}
	case p.MaxMemory > 0 && p.Cgroup == "":
		return &policyError{keyMaxMemory, "needs a cgroup to be enforced: set cgroup or remove max_memory"}
	case p.MaxProcesses > 0 && p.Cgroup == "":
		return &policyError{keyMaxProcesses, "needs a cgroup to be enforced: set cgroup or remove max_processes"}
	}
	return nil
}

// resources fills d's memory and process limits from req and the policy: a
// per-start value replaces the policy's, which is its ceiling. A limit that
// is negative, above the ceiling or that no cgroup can enforce is refused,
// never clamped or ignored.
func (p *Policy) resources(req Request, d *Decision) *Refusal {
	if r := p.resourceLimit(req.MaxMemory, p.MaxMemory, keyMaxMemory, "--max-memory", FormatSize); r != nil {
		return r
	}
	count := func(n int64) string { return strconv.FormatInt(n, 10) + " processes" }
	if r := p.resourceLimit(int64(req.MaxProcesses), int64(p.MaxProcesses), keyMaxProcesses, "--max-processes", count); r != nil {
		return r
	}
	d.MaxMemory = orPolicy(req.MaxMemory, p.MaxMemory)
	d.MaxProcesses = int(orPolicy(int64(req.MaxProcesses), int64(p.MaxProcesses)))
	return nil
}

// orPolicy returns the per-start value when set, else the policy's.
func orPolicy(req, policy int64) int64 {
	if req > 0 {
		return req
	}
	return policy
}

// resourceLimit checks one per-start cgroup limit against the policy's key.
func (p *Policy) resourceLimit(req, ceiling int64, key, flag string, show func(int64) string) *Refusal {
	name := strings.ReplaceAll(key, "_", " ")
	switch {
	case req < 0:
		return refuse(CodeOverLimit, "pass a positive "+name+", or 0 for the policy's", nil,
			"%s %d is negative", name, req)
	case req == 0:
		return nil
	case p.Cgroup == "":
		where := "the policy"
		if p.File != "" {
			where = p.File
		}
		return refuse(CodeOverLimit, "leave "+flag+" out; to enforce it, the operator sets cgroup = \"/sys/fs/cgroup/…\" (a delegated cgroup v2 directory) in "+where, nil,
			"%s %s cannot be enforced: the policy has no cgroup", name, show(req))
	case key == keyMaxProcesses && req > MaxProcessesCeiling:
		return refuse(CodeOverLimit, fmt.Sprintf("pass at most %d", MaxProcessesCeiling), nil,
			"%s %d is above the kernel's bound of %d", name, req, MaxProcessesCeiling)
	case ceiling > 0 && req > ceiling:
		return refuse(CodeOverLimit, "pass at most "+show(ceiling)+", or 0 for the policy's; "+
			p.toRaise(key, "a larger one"), nil,
			"%s %s is above the policy's ceiling of %s (%s)", name, show(req), show(ceiling), key)
	}
	return nil
}
