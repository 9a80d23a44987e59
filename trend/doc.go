// Package trend draws the history of one benchmark metric as a figure: the
// value of every run in time order, the range of its repeats, the control
// band each run is judged against, the runs outside their band, and the
// steps compare.Steps found, each labelled with the first run (and Slurm
// job) of the new level.
//
// It only draws: the series, its bands and its steps are computed by
// package compare (compare.LoadHistory), so that "sbench history" prints
// and plots the same analysis. Figures are gonum/plot plots written as PNG
// (deterministic bytes for the same history), PDF or SVG:
//
//	h, err := compare.LoadHistory(ctx, db, compare.HistoryQuery{Benchmark: "osu_bw", Metric: "bandwidth", X: &size})
//	data, err := trend.Render("trend.png", h)
//
// A PDF written by gonum's vgpdf carries its creation time, so unlike the
// PNG its bytes differ from one run to the next.
package trend
