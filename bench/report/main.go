//go:build linux

// Command report runs every benchmark of the bgcmd module in one `go test`
// run and writes bench/REPORT.md and bench/report.json: for each figure the
// aims name, bgcmd's number, the baseline measured in the same run, their
// ratio and the aim, plus the machine the run was made on.
//
// Nothing in the report is typed in by hand: the pairing of figure and
// baseline and the aims are the table in figures.go; every number comes from
// the run. Benchmarks that no figure names are listed too, so the report
// covers every benchmark of the project.
//
// Usage (make bench runs it from the module root):
//
//	go run ./bench/report [-benchtime 1s] [-capture-mb 1024] [-log-mb 1024] [-out bench]
//	go run ./bench/report -from saved-bench-output.txt
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// config is how the run was made; it goes into the report.
type config struct {
	Benchtime  string   `json:"benchtime"`
	Bench      string   `json:"bench"`
	CaptureMB  int      `json:"capture_mb"`
	LogMB      int      `json:"log_mb"`
	Packages   []string `json:"packages"`
	From       string   `json:"from,omitempty"`
	WallTimeS  float64  `json:"wall_time_s"`
	GoTestArgs []string `json:"go_test_args,omitempty"`
}

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "bench report:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	var cfg config
	var out string
	flag.StringVar(&cfg.Benchtime, "benchtime", "1s", "go test -benchtime for every benchmark")
	flag.StringVar(&cfg.Bench, "bench", ".", "go test -bench pattern")
	flag.IntVar(&cfg.CaptureMB, "capture-mb", 1024, "BGCMD_BENCH_CAPTURE_MB: output size of the capture benchmarks (MiB)")
	flag.IntVar(&cfg.LogMB, "log-mb", 1024, "BGCMD_BENCH_LOG_MB: size of the log the reader benchmarks page (MiB)")
	flag.StringVar(&out, "out", "bench", "directory for REPORT.md and report.json")
	flag.StringVar(&cfg.From, "from", "", "parse this saved `go test -bench` output instead of running")
	flag.Parse()
	pkgs := flag.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	cfg.Packages = pkgs

	module, err := goOutput("list", "-m")
	if err != nil {
		return err
	}
	m, err := readMachine()
	if err != nil {
		return err
	}
	m.LoadBefore = loadAvg()

	var raw []byte
	var runErr error
	start := time.Now()
	if cfg.From != "" {
		raw, err = os.ReadFile(cfg.From)
		if err != nil {
			return err
		}
	} else {
		cfg.GoTestArgs = []string{"test", "-p", "1", "-run", "^$", "-bench", cfg.Bench,
			"-benchtime", cfg.Benchtime, "-count", "1", "-timeout", "90m"}
		cfg.GoTestArgs = append(cfg.GoTestArgs, pkgs...)
		raw, runErr = runBenchmarks(cfg)
	}
	cfg.WallTimeS = time.Since(start).Seconds()
	m.LoadAfter = loadAvg()

	parsed, err := parse(bytes.NewReader(raw), module)
	if err != nil {
		return fmt.Errorf("parse benchmark output: %w", err)
	}
	if parsed.CPU != "" && m.CPU == "" {
		m.CPU = parsed.CPU
	}
	rep := buildReport(m, cfg, parsed)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(out, "report.json"), rep); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "REPORT.md"), []byte(renderMarkdown(rep)), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench report: wrote %s and %s (%d figures, %d benchmarks, %.0fs)\n",
		filepath.Join(out, "REPORT.md"), filepath.Join(out, "report.json"), len(rep.Figures), len(rep.Benchmarks), cfg.WallTimeS)
	switch {
	case runErr != nil:
		return fmt.Errorf("go test: %w (the report lists what ran)", runErr)
	case len(parsed.Failed) > 0:
		return fmt.Errorf("benchmarks failed in %s", strings.Join(parsed.Failed, ", "))
	}
	return nil
}

// runBenchmarks runs go test, echoing its output as it comes.
func runBenchmarks(cfg config) ([]byte, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cmd := exec.CommandContext(ctx, "go", cfg.GoTestArgs...)
	cmd.Env = append(os.Environ(),
		"BGCMD_BENCH_CAPTURE_MB="+strconv.Itoa(cfg.CaptureMB),
		"BGCMD_BENCH_LOG_MB="+strconv.Itoa(cfg.LogMB))
	var buf bytes.Buffer
	cmd.Stdout = io.MultiWriter(os.Stdout, &buf)
	cmd.Stderr = io.MultiWriter(os.Stderr, &buf)
	fmt.Fprintln(os.Stderr, "bench report: go", strings.Join(cfg.GoTestArgs, " "))
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		// Failing packages are reported from the output; keep going.
		return buf.Bytes(), nil
	}
	return buf.Bytes(), err
}

func goOutput(args ...string) (string, error) {
	b, err := exec.Command("go", args...).Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(b)), nil
}

// machine is the line at the top of the report.
type machine struct {
	Cores      int       `json:"cores"`
	GOMAXPROCS int       `json:"gomaxprocs"`
	GoVersion  string    `json:"go_version"`
	CPU        string    `json:"cpu"`
	OS         string    `json:"os"`
	Kernel     string    `json:"kernel"`
	MemoryMiB  int64     `json:"memory_mib"`
	Date       time.Time `json:"date"`
	LoadBefore string    `json:"load_before"`
	LoadAfter  string    `json:"load_after"`
}

func readMachine() (*machine, error) {
	v, err := goOutput("env", "GOVERSION")
	if err != nil {
		return nil, err
	}
	m := &machine{Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: v,
		OS: runtime.GOOS + "/" + runtime.GOARCH, Date: time.Now().UTC().Truncate(time.Second)}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, val, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(val)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kib, _ := strconv.ParseInt(f[1], 10, 64)
				m.MemoryMiB = kib >> 10
			}
		}
	}
	return m, nil
}

// loadAvg is the 1, 5 and 15 minute load averages: the machine is shared,
// and a busy neighbour explains a noisy number.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
