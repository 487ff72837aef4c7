package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// measure is one number of a figure, as found in the run.
type measure struct {
	ref
	// Value is the number; for a benchmark that ran several samples, their
	// median.
	Value float64 `json:"value"`
	Found bool    `json:"found"`
	// Spread is the samples' range, when the benchmark reported one.
	Spread *spread `json:"spread,omitempty"`
}

// spread is the smallest and largest of a metric's samples.
type spread struct {
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Samples int     `json:"samples"`
}

// Prefixes of the units under which a sampled benchmark reports a metric's
// range, and the unit of its number of samples.
const (
	minPrefix   = "min-"
	maxPrefix   = "max-"
	samplesUnit = "samples"
)

// measureOf finds metric x.Metric in res, with its spread if res has one.
func measureOf(res *result, x ref) measure {
	m := measure{ref: x}
	if res == nil {
		return m
	}
	m.Value, m.Found = res.Metrics[x.Metric]
	lo, okLo := res.Metrics[minPrefix+x.Metric]
	hi, okHi := res.Metrics[maxPrefix+x.Metric]
	if m.Found && okLo && okHi {
		m.Spread = &spread{Min: lo, Max: hi, Samples: int(res.Metrics[samplesUnit])}
	}
	return m
}

// figureOut is one row of the report.
type figureOut struct {
	Area       string   `json:"area"`
	Name       string   `json:"name"`
	Bgcmd      measure  `json:"bgcmd"`
	Baseline   *measure `json:"baseline,omitempty"`
	Ratio      *float64 `json:"ratio,omitempty"`
	RatioLabel string   `json:"ratio_label"`
	Aim        string   `json:"aim"`
	Checks     []check  `json:"checks,omitempty"`
	// Meets is nil when the aim has no number or a side is missing.
	Meets   *bool  `json:"meets,omitempty"`
	Missing string `json:"missing,omitempty"`
	// Floor is the figure's floor (figure.Floor) as the run measured it,
	// FloorRatio its ratio to the same baseline, and FloorMeets whether
	// it meets the same aim (nil where there is no floor or no number).
	Floor      *measure `json:"floor,omitempty"`
	FloorRatio *float64 `json:"floor_ratio,omitempty"`
	FloorMeets *bool    `json:"floor_meets,omitempty"`
}

type report struct {
	Machine    *machine    `json:"machine"`
	Config     config      `json:"config"`
	Figures    []figureOut `json:"figures"`
	Benchmarks []*result   `json:"benchmarks"`
	// Unpaired are benchmarks that no figure names.
	Unpaired []string `json:"unpaired"`
	Failed   []string `json:"failed_packages,omitempty"`
	// FailLog is the non-result output of a run where something failed.
	FailLog []string `json:"fail_log,omitempty"`
}

func key(pkg, name string) string { return pkg + "." + name }

func buildReport(m *machine, cfg config, r *run) *report {
	byKey := map[string]*result{}
	for _, res := range r.Results {
		byKey[key(res.Pkg, res.Name)] = res
	}
	used := map[string]bool{}
	lookup := func(x ref) measure {
		res := byKey[key(x.Pkg, x.Bench)]
		if res != nil {
			used[key(x.Pkg, x.Bench)] = true
		}
		return measureOf(res, x)
	}
	rep := &report{Machine: m, Config: cfg, Benchmarks: r.Results, Failed: r.Failed}
	for _, f := range figures {
		fo := figureOut{Area: f.Area, Name: f.Name, Bgcmd: lookup(f.Bgcmd), RatioLabel: f.Ratio.label(),
			Aim: f.Aim, Checks: f.Checks}
		if f.Baseline != nil {
			b := lookup(*f.Baseline)
			fo.Baseline = &b
		}
		var missing []string
		if !fo.Bgcmd.Found {
			missing = append(missing, fo.Bgcmd.Bench+" "+fo.Bgcmd.Metric)
		}
		if fo.Baseline != nil && !fo.Baseline.Found {
			missing = append(missing, fo.Baseline.Bench+" "+fo.Baseline.Metric)
		}
		fo.Missing = strings.Join(missing, "; ")
		if fo.Bgcmd.Found && fo.Baseline != nil && fo.Baseline.Found {
			if ratio, ok := computeRatio(f.Ratio, fo.Bgcmd.Value, fo.Baseline.Value); ok {
				fo.Ratio = &ratio
			}
		}
		fo.Meets = evaluate(f.Checks, fo)
		if f.Floor != nil {
			fl := lookup(*f.Floor)
			fo.Floor = &fl
			fo.FloorRatio, fo.FloorMeets = floorVerdict(f, fo)
		}
		rep.Figures = append(rep.Figures, fo)
	}
	for _, res := range r.Results {
		if !used[key(res.Pkg, res.Name)] {
			rep.Unpaired = append(rep.Unpaired, key(res.Pkg, res.Name))
		}
	}
	if len(r.Failed) > 0 {
		rep.FailLog = r.Log
	}
	return rep
}

// floorVerdict is the floor's ratio to fo's baseline and whether the
// floor meets f's aim: its checks run on the floor in bgcmd's place.
func floorVerdict(f figure, fo figureOut) (*float64, *bool) {
	if !fo.Floor.Found {
		return nil, nil
	}
	as := fo
	as.Bgcmd, as.Ratio = *fo.Floor, nil
	if fo.Baseline != nil && fo.Baseline.Found {
		if ratio, ok := computeRatio(f.Ratio, fo.Floor.Value, fo.Baseline.Value); ok {
			as.Ratio = &ratio
		}
	}
	return as.Ratio, evaluate(f.Checks, as)
}

func computeRatio(k ratioKind, v, base float64) (float64, bool) {
	switch k {
	case ratioSpeedup:
		if v == 0 {
			return 0, false
		}
		return base / v, true
	default:
		if base == 0 {
			return 0, false
		}
		return v / base, true
	}
}

func evaluate(checks []check, fo figureOut) *bool {
	if len(checks) == 0 || !fo.Bgcmd.Found {
		return nil
	}
	ok := true
	for _, c := range checks {
		var x float64
		switch c.On {
		case "value":
			x = fo.Bgcmd.Value
		case "ratio":
			if fo.Ratio == nil {
				return nil
			}
			x = *fo.Ratio
		case "excess":
			if fo.Baseline == nil || !fo.Baseline.Found {
				return nil
			}
			x = fo.Bgcmd.Value - fo.Baseline.Value
		default:
			return nil
		}
		switch c.Op {
		case "<=":
			ok = ok && x <= c.Limit
		case ">=":
			ok = ok && x >= c.Limit
		default:
			return nil
		}
	}
	return &ok
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func renderMarkdown(rep *report) string {
	var b strings.Builder
	m := rep.Machine
	fmt.Fprintf(&b, "# bgcmd benchmark report\n\n")
	fmt.Fprintf(&b, "Generated by `make bench` (`go run ./bench/report`); do not edit by hand. Every number below\n")
	fmt.Fprintf(&b, "comes from one run; each bgcmd figure sits beside a baseline measured in the same run.\n")
	fmt.Fprintf(&b, "The pairings and the aims (bgcmd's own targets) are the table in `bench/report/figures.go`.\n\n")
	fmt.Fprintf(&b, "**Machine:** %d cores (GOMAXPROCS %d), %s, %s, Linux %s, %d MiB RAM; %s; %s.  \n",
		m.Cores, m.GOMAXPROCS, m.CPU, m.OS, m.Kernel, m.MemoryMiB, m.GoVersion, m.Date.Format(time.RFC3339))
	fmt.Fprintf(&b, "**Load average** (1/5/15 min) before: %s; after: %s. The machine may be shared: ratios are\n", m.LoadBefore, m.LoadAfter)
	fmt.Fprintf(&b, "the point, absolute times mean little.  \n")
	c := rep.Config
	fmt.Fprintf(&b, "**Run:** `-benchtime %s`, capture size %d MiB (`BGCMD_BENCH_CAPTURE_MB`), paged log %d MiB (`BGCMD_BENCH_LOG_MB`), packages %s, %s wall time.",
		c.Benchtime, c.CaptureMB, c.LogMB, strings.Join(c.Packages, " "), (time.Duration(c.WallTimeS) * time.Second).String())
	if c.From != "" {
		fmt.Fprintf(&b, " Parsed from `%s`.", c.From)
	}
	b.WriteString("\n\n")

	met, missed, unreachable, unknown := 0, 0, 0, 0
	for _, f := range rep.Figures {
		switch {
		case f.Meets == nil:
			unknown++
		case *f.Meets:
			met++
		default:
			missed++
			if f.FloorMeets != nil && !*f.FloorMeets {
				unreachable++
			}
		}
	}
	fmt.Fprintf(&b, "## Figures\n\n%d figures: %d meet their aim, %d miss it", len(rep.Figures), met, missed)
	if unreachable > 0 {
		fmt.Fprintf(&b, " (%d of them an aim that its own floor, measured in the same run, misses too: out of reach on this machine)", unreachable)
	}
	fmt.Fprintf(&b, ", %d have no numeric aim or were not measured.\n\n", unknown)
	b.WriteString("| area | figure | bgcmd | baseline (same run) | ratio | aim | meets |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, f := range rep.Figures {
		base, ratio := "—", "—"
		if f.Baseline != nil {
			base = cell(*f.Baseline)
		}
		if f.Ratio != nil {
			ratio = fmtRatio(*f.Ratio, f.RatioLabel)
		}
		meets := "—"
		if f.Meets != nil {
			meets = map[bool]string{true: "yes", false: "**no**"}[*f.Meets]
		}
		if f.Missing != "" {
			meets = "not measured"
		} else if f.FloorMeets != nil {
			meets += fmt.Sprintf("; its floor: %s (%s)", map[bool]string{true: "yes", false: "no"}[*f.FloorMeets], floorShown(f))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", f.Area, f.Name, cell(f.Bgcmd), base, ratio, f.Aim, meets)
	}
	b.WriteString("\nRatios: *× baseline time* is bgcmd's time ÷ the baseline's (lower is better); *of baseline speed* is\n")
	b.WriteString("bgcmd's throughput ÷ the baseline's (higher is better); *faster than baseline* is the baseline's time ÷\n")
	b.WriteString("bgcmd's; *× baseline size* is bgcmd's peak RSS ÷ the baseline's; *× baseline count* is bgcmd's count of\n")
	b.WriteString("events (page faults) ÷ the baseline's. Where a benchmark ran several samples\n")
	b.WriteString("(bgcmd and its baseline interleaved in each), the number is their median, the range under it their\n")
	b.WriteString("minimum and maximum, and the ratio that of the medians.\n")
	b.WriteString("\n*Its floor* (in *meets*): where a figure has a floor program measured in the same run (the least the\n")
	b.WriteString("same work costs on this machine), whether that floor meets the same aim, and its number. An aim its\n")
	b.WriteString("floor misses is out of reach here; one its floor meets and bgcmd misses is bgcmd's gap. Where bgcmd\n")
	b.WriteString("meets what its floor misses, the floor was not the least in that run: its spread says whether by chance.\n")

	var notMeasured []string
	for _, f := range rep.Figures {
		if f.Missing != "" {
			notMeasured = append(notMeasured, fmt.Sprintf("- %s: no result for %s in this run.", f.Name, f.Missing))
		}
	}
	if len(notMeasured) > 0 {
		b.WriteString("\n### Not measured\n\n" + strings.Join(notMeasured, "\n") + "\n")
	}

	b.WriteString("\n## Every benchmark of the run\n\n")
	b.WriteString("| package | benchmark | iterations | results |\n| --- | --- | --- | --- |\n")
	results := append([]*result(nil), rep.Benchmarks...)
	sort.SliceStable(results, func(i, j int) bool { return results[i].Pkg < results[j].Pkg })
	for _, r := range results {
		var parts []string
		for _, u := range r.Units {
			if _, dup := r.Metrics["µs/op"]; dup && u == "ns/op" {
				continue // the benchmark reports the same time in µs
			}
			if strings.HasPrefix(u, minPrefix) || strings.HasPrefix(u, maxPrefix) {
				continue // shown with the median
			}
			m := measureOf(r, ref{Pkg: r.Pkg, Bench: r.Name, Metric: u})
			parts = append(parts, fmtValue(m.Value, u)+fmtSpread(m.Spread, u))
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", r.Pkg, r.Name, r.Iterations, strings.Join(parts, ", "))
	}
	if len(rep.Unpaired) > 0 {
		fmt.Fprintf(&b, "\nNot part of a figure: %s.\n", strings.Join(rep.Unpaired, ", "))
	}
	if len(rep.Failed) > 0 {
		fmt.Fprintf(&b, "\n## Failed\n\nBenchmarks failed in: %s. Their output:\n\n```\n", strings.Join(rep.Failed, ", "))
		log := rep.FailLog
		if len(log) > 200 {
			log = log[len(log)-200:]
		}
		b.WriteString(strings.Join(log, "\n"))
		b.WriteString("\n```\n")
	}
	return b.String()
}

func cell(m measure) string {
	if !m.Found {
		return fmt.Sprintf("not measured (`%s`)", m.Bench)
	}
	return fmt.Sprintf("%s%s <sub>%s/%s</sub>", fmtValue(m.Value, m.Metric), fmtSpread(m.Spread, m.Metric),
		m.Pkg, strings.TrimPrefix(m.Bench, "Benchmark"))
}

// fmtSpread renders a sampled metric's range: " (min X, max Y, N samples)".
func fmtSpread(s *spread, unit string) string {
	if s == nil {
		return ""
	}
	v := func(x float64) string {
		if unit == "ns/op" {
			return fmtDuration(x)
		}
		return sig(x)
	}
	return fmt.Sprintf(" (min %s, max %s, %d samples)", v(s.Min), v(s.Max), s.Samples)
}

func fmtRatio(r float64, label string) string {
	switch label {
	case ratioShare.label():
		return fmt.Sprintf("%s%% %s", sig(r*100), label)
	case ratioSpeedup.label():
		return fmt.Sprintf("%s× %s", sig(r), label)
	}
	return fmt.Sprintf("%s%s", sig(r), label)
}

// floorShown is the floor's number the aim is checked on: its value where
// the first check is on the value, else its ratio to the baseline.
func floorShown(f figureOut) string {
	if f.FloorRatio == nil || len(f.Checks) > 0 && f.Checks[0].On == "value" {
		return fmtValue(f.Floor.Value, f.Floor.Metric)
	}
	return fmtRatio(*f.FloorRatio, f.RatioLabel)
}

// fmtValue renders a metric for people: times in ns/op become durations.
func fmtValue(v float64, unit string) string {
	switch unit {
	case "ns/op":
		return fmtDuration(v) + "/op"
	case samplesUnit:
		return fmt.Sprintf("%.0f samples", v)
	}
	return sig(v) + " " + unit
}

func fmtDuration(ns float64) string {
	switch {
	case ns >= 1e9:
		return sig(ns/1e9) + " s"
	case ns >= 1e6:
		return sig(ns/1e6) + " ms"
	case ns >= 1e3:
		return sig(ns/1e3) + " µs"
	}
	return sig(ns) + " ns"
}

// sig prints x with three significant digits (more for big integers),
// grouping thousands.
func sig(x float64) string {
	if x == 0 {
		return "0"
	}
	ax := math.Abs(x)
	var s string
	switch {
	case ax >= 1000:
		s = group(strconv.FormatFloat(math.Round(x), 'f', 0, 64))
	case ax >= 100:
		s = strconv.FormatFloat(x, 'f', 0, 64)
	case ax >= 10:
		s = strconv.FormatFloat(x, 'f', 1, 64)
	case ax >= 1:
		s = strconv.FormatFloat(x, 'f', 2, 64)
	default:
		s = strconv.FormatFloat(x, 'g', 3, 64)
	}
	return s
}

func group(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
