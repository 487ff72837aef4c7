package main

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// result is one benchmark line of `go test -bench` output.
type result struct {
	Pkg        string             `json:"package"`
	Name       string             `json:"benchmark"`
	Procs      int                `json:"procs"`
	Iterations int64              `json:"iterations"`
	Metrics    map[string]float64 `json:"metrics"`
	// Units keeps the metrics in the order the benchmark printed them.
	Units []string `json:"units"`
}

// run is everything parsed from one `go test -bench` output.
type run struct {
	CPU     string
	Results []*result
	// Failed lists the packages whose benchmarks failed (FAIL lines).
	Failed []string
	// Log is every line that is not a result, for the report's appendix
	// when something failed.
	Log []string
}

var (
	benchLine  = regexp.MustCompile(`^(Benchmark\S+?)(?:-(\d+))?\s+(\d+)\s+(.+)$`)
	benchName  = regexp.MustCompile(`^(Benchmark\S+?)(?:-(\d+))?\s*$`)
	resultOnly = regexp.MustCompile(`^\s*(\d+)\s+([-+0-9.eE]+\s+\S+.*)$`)
	failLine   = regexp.MustCompile(`^(?:FAIL|---\s*FAIL:?)\s+(\S+)`)
)

// parse reads `go test -bench` output. modulePrefix is stripped from package
// paths ("github.com/bgcmd/bgcmd/runner" → "runner"; the root → ".").
func parse(r io.Reader, modulePrefix string) (*run, error) {
	out := &run{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	pkg := ""
	// pending is a benchmark whose name was printed before its result
	// (the benchmark wrote to stdout while it ran).
	var pending *result
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = shortPkg(strings.TrimPrefix(line, "pkg: "), modulePrefix)
			continue
		case strings.HasPrefix(line, "cpu: "):
			out.CPU = strings.TrimSpace(strings.TrimPrefix(line, "cpu: "))
			continue
		}
		if m := benchLine.FindStringSubmatch(line); m != nil {
			res := newResult(pkg, m[1], m[2])
			if fillMetrics(res, m[3], m[4]) {
				out.Results = append(out.Results, res)
				pending = nil
				continue
			}
		}
		if m := benchName.FindStringSubmatch(line); m != nil {
			pending = newResult(pkg, m[1], m[2])
			continue
		}
		if pending != nil {
			if m := resultOnly.FindStringSubmatch(line); m != nil && fillMetrics(pending, m[1], m[2]) {
				out.Results = append(out.Results, pending)
				pending = nil
				continue
			}
		}
		if m := failLine.FindStringSubmatch(line); m != nil && strings.HasPrefix(line, "FAIL") && strings.Contains(m[1], "/") {
			out.Failed = append(out.Failed, shortPkg(m[1], modulePrefix))
		}
		out.Log = append(out.Log, line)
	}
	return out, sc.Err()
}

func newResult(pkg, name, procs string) *result {
	p, _ := strconv.Atoi(procs)
	return &result{Pkg: pkg, Name: name, Procs: p, Metrics: map[string]float64{}}
}

// fillMetrics parses "N v1 u1 v2 u2 …" into res; false when it is not that.
func fillMetrics(res *result, iters, rest string) bool {
	n, err := strconv.ParseInt(iters, 10, 64)
	if err != nil {
		return false
	}
	f := strings.Fields(rest)
	if len(f) < 2 || len(f)%2 != 0 {
		return false
	}
	for i := 0; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return false
		}
		if _, dup := res.Metrics[f[i+1]]; !dup {
			res.Units = append(res.Units, f[i+1])
		}
		res.Metrics[f[i+1]] = v
	}
	res.Iterations = n
	return true
}

func shortPkg(p, modulePrefix string) string {
	if p == modulePrefix {
		return "."
	}
	return strings.TrimPrefix(p, modulePrefix+"/")
}
