package runner

import (
	"fmt"
	"slices"
	"time"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/policy"
)

// A job's hook travels in its row (hook_runs), so that whichever process
// settles the job knows it. The row is not the authority, though: anyone
// who can write the store (on a store shared by hosts, another host, or
// a job anywhere that reaches the database) could name any program there.
// A process runs a hook only when the row names exactly the on_settle of
// the policy the job was started under on this host (hookRule), which
// travels to a detached supervisor in its spec; any other is recorded as
// not started, saying why, and never run.

// hookRule is the on_settle hook a policy names, as a hook row keeps it.
type hookRule struct {
	Argv       []string `json:"argv"`
	SearchPath string   `json:"search_path"`
	TimeoutNS  int64    `json:"timeout_ns"`
}

// hookRuleOf returns p's on_settle hook, or nil when p names none.
func hookRuleOf(p *policy.Policy) *hookRule {
	if p == nil || len(p.OnSettle) == 0 {
		return nil
	}
	timeout := p.OnSettleTimeout
	if timeout <= 0 {
		timeout = policy.StandardOnSettleTimeout
	}
	path := p.Path
	if path == "" {
		path = policy.StandardPath
	}
	return &hookRule{Argv: slices.Clone(p.OnSettle), SearchPath: path, TimeoutNS: int64(timeout)}
}

// hookRule is the hook of this runner's policy, or else of the one
// Options.HookPolicy gives, loaded once (nil: none).
func (r *Runner) hookRule() *hookRule {
	if r.policy == nil && r.hookPolicy != nil {
		r.hookPolicyOnce.Do(func() { r.hookPolicyGot = r.hookPolicy() })
		return hookRuleOf(r.hookPolicyGot)
	}
	return hookRuleOf(r.policy)
}

// row is the hook row rule makes for job id.
func (rule *hookRule) row(id string) jobstore.SettleHook {
	return jobstore.SettleHook{JobID: id, Argv: rule.Argv, SearchPath: rule.SearchPath, Timeout: time.Duration(rule.TimeoutNS)}
}

// refuses returns why the claimed hook row h is not rule's hook, or "".
// Durations compare in the milliseconds a row keeps.
func (rule *hookRule) refuses(h *jobstore.SettleHook) string {
	if rule == nil {
		return fmt.Sprintf("the job's hook row names %q, but the policy it was started under names no on_settle: it was not run", h.Argv)
	}
	if !slices.Equal(h.Argv, rule.Argv) || h.SearchPath != rule.SearchPath ||
		h.Timeout.Milliseconds() != time.Duration(rule.TimeoutNS).Milliseconds() {
		return fmt.Sprintf("the job's hook row names %q (PATH %s, timeout %s), not the policy's on_settle %q (PATH %s, timeout %s): it was not run",
			h.Argv, h.SearchPath, h.Timeout, rule.Argv, rule.SearchPath, time.Duration(rule.TimeoutNS))
	}
	return ""
}
