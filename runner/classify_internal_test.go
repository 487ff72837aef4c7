package runner

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

func exitedWith(code int) procExit {
	ws := syscall.WaitStatus(code << 8)
	return procExit{status: &ws}
}

func signalled(sig syscall.Signal) procExit {
	ws := syscall.WaitStatus(sig)
	return procExit{status: &ws}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	full := errors.New("stdout: write stdout.log: no space left on device")
	base := happened{containment: ContainProcessGroup, timeout: time.Minute, killGrace: 5 * time.Second, maxOutputBytes: 100,
		written: map[bgcmd.Stream]int64{bgcmd.Stdout: 7, bgcmd.Stderr: 3}}
	with := func(f func(*happened)) happened {
		h := base
		f(&h)
		return h
	}
	tests := []struct {
		name     string
		h        happened
		state    bgcmd.State
		exitCode *int
		signal   string
		err      string
		detail   map[string]any
	}{
		{
			name:  "A process that exits on its own is exited with its code.",
			h:     with(func(h *happened) { h.ended = exitedWith(3) }),
			state: bgcmd.StateExited, exitCode: ptr(3),
		},
		{
			name:  "A process that dies of its own signal is exited with the signal.",
			h:     with(func(h *happened) { h.ended = signalled(syscall.SIGSEGV) }),
			state: bgcmd.StateExited, signal: "SIGSEGV",
		},
		{
			name:  "A kill request makes it killed.",
			h:     with(func(h *happened) { h.stop, h.ended = bgcmd.StateKilled, signalled(syscall.SIGTERM) }),
			state: bgcmd.StateKilled, signal: "SIGTERM",
		},
		{
			name:  "A timeout says so with the limits.",
			h:     with(func(h *happened) { h.stop, h.ended = bgcmd.StateTimeout, signalled(syscall.SIGTERM) }),
			state: bgcmd.StateTimeout, signal: "SIGTERM", err: "timed out after 1m0s: SIGTERM to the process group, SIGKILL after 5s",
		},
		{
			name: "A capped stream is output_limit even when the process exited first.",
			h: with(func(h *happened) {
				h.ended, h.capped = exitedWith(0), map[bgcmd.Stream]bool{bgcmd.Stderr: true}
			}),
			state: bgcmd.StateOutputLimit, exitCode: ptr(0),
			err:    "output cap of 100 bytes per stream reached",
			detail: map[string]any{"capped_stderr": true},
		},
		{
			name:  "Output that could not be written stops the job as exited, never killed, and says why.",
			h:     with(func(h *happened) { h.lostOutput, h.ended = full, signalled(syscall.SIGKILL) }),
			state: bgcmd.StateExited, signal: "SIGKILL",
			err:    "output could not be written, so the process group was killed: stdout: write stdout.log: no space left on device; kept 7 bytes of stdout and 3 bytes of stderr",
			detail: map[string]any{"stopped_by": "output_write_error", "output_write_error": full.Error()},
		},
		{
			name: "A write error after a timeout keeps the timeout and adds the loss.",
			h: with(func(h *happened) {
				h.stop, h.lostOutput, h.ended = bgcmd.StateTimeout, full, signalled(syscall.SIGKILL)
			}),
			state: bgcmd.StateTimeout, signal: "SIGKILL",
			err:    "timed out after 1m0s",
			detail: map[string]any{"output_write_error": full.Error()},
		},
		{
			name: "An unknown wait status is an error, with leftovers and cgroup problems in the detail.",
			h: with(func(h *happened) {
				h.ended = procExit{err: errors.New("no child"), leftovers: 2}
				h.cgroupErr = errors.New("cgroup busy")
			}),
			state: bgcmd.StateExited, err: "wait: no child",
			detail: map[string]any{"leftover_processes_killed": 2, "cgroup_error": "cgroup busy"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := classify(tt.h)
			require.Equal(t, tt.state, out.state)
			require.Equal(t, tt.exitCode, out.exitCode)
			require.Equal(t, tt.signal, out.signal)
			if tt.err == "" {
				require.Empty(t, out.err)
			} else {
				require.Contains(t, out.err, tt.err)
			}
			require.Equal(t, string(ContainProcessGroup), out.detail["containment"])
			for k, v := range tt.detail {
				require.Equal(t, v, out.detail[k], "detail %s", k)
			}
			if tt.detail["stopped_by"] == nil {
				require.NotContains(t, out.detail, "stopped_by")
			}
		})
	}
}

func ptr(n int) *int { return &n }
