package soak

import (
	"bytes"
	"fmt"
	"math/rand"
	"os/signal"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/bgcmd/bgcmd"
)

// kind is one sort of job in the soak mix.
type kind int

const (
	kSucceed    kind = iota // exit-with.sh 0
	kFail                   // exit-with.sh N
	kPrint                  // print-bytes.sh N: megabytes on stdout
	kPrintErr               // print-bytes.sh N err: megabytes on stderr
	kCap                    // print-bytes.sh N with --max-output M < N
	kTimeout                // slow-lines.sh with a short --timeout
	kIgnoreTerm             // ignore-term.sh with a short --timeout: SIGKILL after the grace
	kGrandchild             // fork-grandchild.sh: a sleeper left in the group
	kKill                   // slow-lines.sh stopped by `bgcmd kill`
	kSignal                 // kill-self.sh SIG: exits on a signal
	numKinds
)

var kindNames = [...]string{"succeed", "fail", "print", "print-stderr", "cap", "timeout",
	"ignore-term", "grandchild", "kill", "signal"}

func (k kind) String() string { return kindNames[k] }

// kindWeights is the deterministic mix: how often each kind is drawn.
var kindWeights = [numKinds]int{
	kSucceed: 14, kFail: 12, kPrint: 12, kPrintErr: 5, kCap: 8, kTimeout: 8,
	kIgnoreTerm: 6, kGrandchild: 10, kKill: 12, kSignal: 8,
}

// mode is how the harness drives a job.
type mode int

const (
	// modeDetached: `bgcmd run`, then `bgcmd wait` (reads the job).
	modeDetached mode = iota
	// modeHost: `bgcmd run --wait` in the foreground, a host the harness may
	// SIGKILL at a random moment and then restart as `bgcmd wait`.
	modeHost
	// modeUnread: `bgcmd run`, then only read-only polling of the database:
	// the job must stay in its session's finished counter.
	modeUnread
)

var modeNames = [...]string{"detached", "host", "unread"}

func (m mode) String() string { return modeNames[m] }

// signals kill-self.sh sends itself. SIGINT and SIGHUP matter: a supervisor
// that ignores them must not pass that on to the command.
var selfSignals = []struct {
	name string
	sig  int
}{{"TERM", 15}, {"KILL", 9}, {"USR1", 10}, {"INT", 2}, {"HUP", 1}}

// sessions the soak spreads its jobs over, so counters are checked per
// session.
var soakSessions = []string{"soak-a", "soak-b", "soak-c", "soak-d"}

// spec is one job of the soak: what to run, how to drive it, and what it
// must leave behind when nothing interrupts it.
type spec struct {
	n       int
	tag     string
	kind    kind
	mode    mode
	session string
	argv    []string
	flags   []string
	// hostKillAfter (modeHost): SIGKILL the host this long after it
	// started; negative: let it finish.
	hostKillAfter time.Duration
	// killAfterBytes (kKill): send `bgcmd kill` once stdout has this much.
	killAfterBytes int64
	want           expectation
}

// expectation is a job's natural outcome.
type expectation struct {
	state    bgcmd.State
	exitCode *int
	signal   string
	stdout   stream
	stderr   stream
}

// stream describes one output stream: gen(n) yields the first n bytes the
// generator prints; full is the whole length when it is known exactly (-1:
// an endless or timing-dependent stream, so only a prefix can be checked).
type stream struct {
	gen  func(n int) []byte
	full int
	// pattern, when set, is checked instead of gen (a grandchild's pid).
	pattern *regexp.Regexp
}

func exact(b string) stream {
	return stream{gen: func(n int) []byte { return []byte(b)[:n] }, full: len(b)}
}

func endless(gen func(int) []byte) stream { return stream{gen: gen, full: -1} }

// prefixOf is a stream of which only a prefix may have been printed.
func prefixOf(s stream) stream {
	if s.pattern != nil {
		return s
	}
	return stream{gen: s.gen, full: -1 - s.full} // -1-full: at most full bytes
}

// maxLen is the longest prefix a prefix stream allows (-1: unbounded).
func (s stream) maxLen() int {
	if s.full >= 0 {
		return s.full
	}
	if s.full == -1 {
		return -1
	}
	return -1 - s.full
}

// check compares what was banked with the stream; exactMatch says whether
// the whole stream was required.
func (s stream) check(got []byte, exactMatch bool) error {
	if s.pattern != nil {
		if exactMatch && !s.pattern.Match(got) {
			return fmt.Errorf("got %q, want a match of %s", clip(got), s.pattern)
		}
		if !exactMatch && !partialPID.Match(got) {
			return fmt.Errorf("got %q, want a prefix of a pid line", clip(got))
		}
		return nil
	}
	if exactMatch && s.full >= 0 {
		want := s.gen(s.full)
		if !bytes.Equal(got, want) {
			return fmt.Errorf("got %d bytes (sha256 %s), want exactly %d bytes (sha256 %s)%s",
				len(got), sha(got), len(want), sha(want), firstDiff(got, want))
		}
		return nil
	}
	if m := s.maxLen(); m >= 0 && len(got) > m {
		return fmt.Errorf("got %d bytes, more than the %d the generator prints", len(got), m)
	}
	if want := s.gen(len(got)); !bytes.Equal(got, want) {
		return fmt.Errorf("got %d bytes that are not a prefix of the generator's output%s", len(got), firstDiff(got, want))
	}
	return nil
}

func firstDiff(got, want []byte) string {
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			lo := max(0, i-20)
			return fmt.Sprintf("; first difference at byte %d: got %q, want %q", i,
				got[lo:min(len(got), i+40)], want[lo:min(len(want), i+40)])
		}
	}
	if len(got) > len(want) {
		return fmt.Sprintf("; extra bytes: %q", clip(got[len(want):]))
	}
	return ""
}

var (
	pidLine    = regexp.MustCompile(`^[0-9]+\n$`)
	partialPID = regexp.MustCompile(`^[0-9]*\n?$`)
)

// alphabet is what print-bytes.sh prints: the first n bytes of a repeating
// "abcdefghijklmnopqrstuvwxyz\n".
func alphabet(n int) []byte {
	const line = "abcdefghijklmnopqrstuvwxyz\n"
	b := bytes.Repeat([]byte(line), n/len(line)+1)
	return b[:n]
}

// slowLines is what slow-lines.sh prints before its "done": "line 1\n",
// "line 2\n", …, cut to n bytes.
func slowLines(n int) []byte {
	var b bytes.Buffer
	for i := 1; b.Len() < n; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	return b.Bytes()[:n]
}

func intp(i int) *int { return &i }

// makeSpecs draws the deterministic mix: the same seed gives the same jobs.
func makeSpecs(t interface{ Helper() }, seed int64, n int, fx func(string) string) []*spec {
	rng := rand.New(rand.NewSource(seed))
	total := 0
	for _, w := range kindWeights {
		total += w
	}
	specs := make([]*spec, n)
	for i := range specs {
		draw := rng.Intn(total)
		k := kind(0)
		for ; draw >= kindWeights[k]; k++ {
			draw -= kindWeights[k]
		}
		s := &spec{n: i, kind: k, tag: fmt.Sprintf("soak-%d-%06d", seed, i),
			session: soakSessions[rng.Intn(len(soakSessions))], hostKillAfter: -1}
		switch r := rng.Intn(100); {
		case r < 20:
			s.mode = modeHost
			if rng.Intn(100) < 60 {
				s.hostKillAfter = time.Duration(rng.Intn(400)) * time.Millisecond
			}
		case r < 30:
			s.mode = modeUnread
		}
		empty := exact("")
		switch k {
		case kSucceed, kFail:
			code := 0
			if k == kFail {
				code = 1 + rng.Intn(120)
			}
			s.argv = []string{fx("exit-with.sh"), strconv.Itoa(code)}
			s.want = expectation{state: bgcmd.StateExited, exitCode: intp(code),
				stdout: exact(fmt.Sprintf("out: exiting with %d\n", code)),
				stderr: exact(fmt.Sprintf("err: exiting with %d\n", code))}
		case kPrint, kPrintErr:
			size := 64<<10 + rng.Intn(4<<20)
			s.argv = []string{fx("print-bytes.sh"), strconv.Itoa(size), "out"}
			s.want = expectation{state: bgcmd.StateExited, exitCode: intp(0),
				stdout: stream{gen: alphabet, full: size}, stderr: empty}
			if k == kPrintErr {
				s.argv[2] = "err"
				s.want.stdout, s.want.stderr = empty, stream{gen: alphabet, full: size}
			}
		case kCap:
			size := 256<<10 + rng.Intn(3<<20)
			capBytes := 1 + rng.Intn(size/2)
			s.argv = []string{fx("print-bytes.sh"), strconv.Itoa(size), "out"}
			s.flags = []string{"--max-output", strconv.Itoa(capBytes)}
			s.want = expectation{state: bgcmd.StateOutputLimit,
				stdout: stream{gen: alphabet, full: capBytes}, stderr: empty}
		case kTimeout:
			s.argv = []string{fx("slow-lines.sh"), "100000", "0.02"}
			s.flags = []string{"--timeout", fmt.Sprintf("%dms", 200+rng.Intn(600))}
			s.want = expectation{state: bgcmd.StateTimeout, stdout: endless(slowLines), stderr: empty}
		case kIgnoreTerm:
			s.argv = []string{fx("ignore-term.sh")}
			s.flags = []string{"--timeout", fmt.Sprintf("%dms", 200+rng.Intn(400))}
			s.want = expectation{state: bgcmd.StateTimeout, stdout: prefixOf(exact("ready\n")), stderr: empty}
		case kGrandchild:
			s.argv = []string{fx("fork-grandchild.sh")}
			s.want = expectation{state: bgcmd.StateExited, exitCode: intp(0),
				stdout: stream{pattern: pidLine}, stderr: empty}
		case kKill:
			s.mode = modeDetached // a kill reads the job: it cannot stay unread
			s.hostKillAfter = -1
			s.argv = []string{fx("slow-lines.sh"), "100000", "0.02"}
			s.killAfterBytes = int64(1 + rng.Intn(64))
			s.want = expectation{state: bgcmd.StateKilled, stdout: endless(slowLines), stderr: empty}
		case kSignal:
			sig := selfSignals[rng.Intn(len(selfSignals))]
			s.argv = []string{fx("kill-self.sh"), sig.name}
			s.want = expectation{state: bgcmd.StateExited, signal: "SIG" + sig.name,
				stdout: exact("about to receive " + sig.name + "\n"), stderr: empty}
			if signal.Ignored(syscall.Signal(sig.sig)) {
				// The suite was started with it ignored (nohup): so is the
				// command, which lives through it and exits 0 after its
				// sleep.
				s.want.signal, s.want.exitCode = "", new(0)
			}
		}
		// Every script ignores extra arguments: the tag finds the job even
		// when its host died before printing the id.
		s.argv = append(s.argv, s.tag)
		specs[i] = s
	}
	return specs
}
