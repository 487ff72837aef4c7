package webui

import (
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// svgRect and svgText are the shapes of the server-rendered charts; the
// template writes them as SVG elements, escaped like any other value.
type svgRect struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type svgText struct {
	X, Y   float64
	Text   string
	Anchor string
	Class  string
}

// chart is one inline SVG chart.
type chart struct {
	Width, Height int
	Label         string
	Rects         []svgRect
	Texts         []svgText
	Empty         bool
}

type chartsBody struct {
	Window   string
	Hours    int
	PerHour  chart
	Totals   []outcomeTotal
	Duration chart
	Exes     []jobstore.ExeDuration
}

// chartWindows are the spans the charts cover.
var chartWindows = map[string]int{"day": 24, "week": 7 * 24}

func (s *Server) handleCharts(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	window := r.URL.Query().Get("window")
	if window == "" {
		window = "day"
	}
	hours, ok := chartWindows[window]
	if !ok {
		s.fail(w, badRequest("window %q: want day or week", window))
		return
	}
	end := s.now().UTC().Truncate(time.Hour).Add(time.Hour)
	start := end.Add(-time.Duration(hours) * time.Hour)
	data, err := s.store.Charts(ctx, start, end, 10)
	if err != nil {
		s.fail(w, err)
		return
	}
	body := chartsBody{Window: window, Hours: hours, PerHour: perHourChart(data.Hours, start, hours),
		Totals: totals(data.Hours), Duration: durationChart(data.Exes), Exes: data.Exes}
	s.render(w, http.StatusOK, "charts", view{Title: "Charts", Body: body})
}

// perHourChart stacks each hour's jobs by outcome, in jobstore.Outcomes
// order from the bottom.
func perHourChart(counts []jobstore.HourCount, start time.Time, hours int) chart {
	const width, height, left, bottom, top = 760, 200, 40, 22, 8
	c := chart{Width: width, Height: height, Label: "Jobs per hour by outcome", Empty: len(counts) == 0}
	type key struct {
		hour    int
		outcome jobstore.Outcome
	}
	byKey := map[key]int{}
	perHour := make([]int, hours)
	for _, hc := range counts {
		h := int(hc.Hour.Sub(start) / time.Hour)
		if h < 0 || h >= hours {
			continue
		}
		byKey[key{h, hc.Outcome}] += hc.Jobs
		perHour[h] += hc.Jobs
	}
	most := 1
	for _, n := range perHour {
		most = max(most, n)
	}
	plotH := float64(height - bottom - top)
	barW := float64(width-left) / float64(hours)
	for h := 0; h < hours; h++ {
		y := float64(height - bottom)
		at := start.Add(time.Duration(h) * time.Hour)
		for _, o := range jobstore.Outcomes {
			n := byKey[key{h, o}]
			if n == 0 {
				continue
			}
			bh := plotH * float64(n) / float64(most)
			y -= bh
			c.Rects = append(c.Rects, svgRect{X: round1(float64(left) + float64(h)*barW), Y: round1(y),
				W: round1(max(barW-1, 0.5)), H: round1(bh), Class: "o-" + string(o),
				Title: fmt.Sprintf("%s: %d %s", at.Format("2006-01-02 15:00Z"), n, o)})
		}
		step := 3
		if hours > 24 {
			step = 24
		}
		if h%step == 0 {
			label := at.Format("15:00")
			if hours > 24 {
				label = at.Format("Jan 2")
			}
			c.Texts = append(c.Texts, svgText{X: round1(float64(left) + float64(h)*barW), Y: height - 6, Text: label, Anchor: "start"})
		}
	}
	c.Texts = append(c.Texts,
		svgText{X: left - 4, Y: top + 10, Text: fmt.Sprint(most), Anchor: "end"},
		svgText{X: left - 4, Y: float64(height - bottom), Text: "0", Anchor: "end"})
	return c
}

// durationChart draws each executable's mean run time as a bar with its
// longest run as a thin mark, the slowest first.
func durationChart(exes []jobstore.ExeDuration) chart {
	const width, row, labelW, textW = 760, 26, 200, 230
	c := chart{Width: width, Height: max(row*len(exes), row) + 4, Label: "Run time by executable", Empty: len(exes) == 0}
	var longest time.Duration = 1
	for _, e := range exes {
		longest = max(longest, e.Max)
	}
	plotW := float64(width - labelW - textW)
	for i, e := range exes {
		y := float64(i*row + 4)
		meanW := max(plotW*float64(e.Mean)/float64(longest), 1)
		maxX := float64(labelW) + plotW*float64(e.Max)/float64(longest)
		c.Texts = append(c.Texts, svgText{X: labelW - 6, Y: y + 15, Text: filepath.Base(e.Exe), Anchor: "end"})
		c.Rects = append(c.Rects,
			svgRect{X: labelW, Y: y + 3, W: round1(meanW), H: row - 10, Class: "bar-mean",
				Title: fmt.Sprintf("%s: mean %s over %d jobs", e.Exe, dur(e.Mean), e.Jobs)},
			svgRect{X: round1(max(maxX-2, labelW)), Y: y, W: 2, H: row - 4, Class: "bar-max",
				Title: fmt.Sprintf("%s: longest %s", e.Exe, dur(e.Max))})
		c.Texts = append(c.Texts, svgText{X: float64(width - textW + 8), Y: y + 15,
			Text: fmt.Sprintf("mean %s · max %s · %d jobs", dur(e.Mean), dur(e.Max), e.Jobs), Anchor: "start"})
	}
	return c
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }
