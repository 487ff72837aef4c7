package policy

import "time"

// defaultTimeout is the effective default timeout.
func (p *Policy) defaultTimeout() time.Duration {
	if p.DefaultTimeout == 0 {
		return StandardTimeout
	}
	return p.DefaultTimeout
}

// maxTimeout is the effective ceiling for a per-start timeout.
func (p *Policy) maxTimeout() time.Duration {
	if p.MaxTimeout == 0 {
		return p.defaultTimeout()
	}
	return p.MaxTimeout
}

// killGrace is the effective SIGTERM-to-SIGKILL grace.
func (p *Policy) killGrace() time.Duration {
	if p.KillGrace == 0 {
		return StandardKillGrace
	}
	return p.KillGrace
}

// maxOutputBytes is the effective per-stream cap and its ceiling.
func (p *Policy) maxOutputBytes() int64 {
	if p.MaxOutputBytes == 0 {
		return StandardMaxOutputBytes
	}
	return p.MaxOutputBytes
}

// toRaise says which key an operator raises to allow what, and where it
// lives.
func (p *Policy) toRaise(key, what string) string {
	where := "the policy"
	if p.File != "" {
		where = p.File
	}
	return "to allow " + what + ", the operator raises " + key + " in " + where
}

// limits fills d's timeout, grace and cap from req and the policy. A value
// that is negative or above the ceiling is refused, never clamped.
func (p *Policy) limits(req Request, d *Decision) *Refusal {
	switch ceiling := p.maxTimeout(); {
	case req.Timeout < 0:
		return refuse(CodeOverLimit, "pass a positive timeout, or 0 for the policy default", nil,
			"timeout %s is negative", req.Timeout)
	case req.Timeout > ceiling:
		return refuse(CodeOverLimit, "pass a timeout of at most "+ceiling.String()+", or 0 for the policy default; "+
			p.toRaise("max_timeout", "a longer one"), nil,
			"timeout %s is above the policy's ceiling of %s", req.Timeout, ceiling)
	case req.Timeout == 0:
		d.Timeout = p.defaultTimeout()
	default:
		d.Timeout = req.Timeout
	}
	switch ceiling := p.maxOutputBytes(); {
	case req.MaxOutputBytes < 0:
		return refuse(CodeOverLimit, "pass a positive byte count, or 0 for the policy default", nil,
			"max output bytes %d is negative", req.MaxOutputBytes)
	case req.MaxOutputBytes > ceiling:
		return refuse(CodeOverLimit, "pass at most the policy's cap, or 0 for it; page through long output instead; "+
			p.toRaise("max_output_bytes", "a larger cap"), nil,
			"max output bytes %d is above the policy's cap of %d per stream", req.MaxOutputBytes, ceiling)
	case req.MaxOutputBytes == 0:
		d.MaxOutputBytes = ceiling
	default:
		d.MaxOutputBytes = req.MaxOutputBytes
	}
	d.KillGrace = p.killGrace()
	return nil
}
