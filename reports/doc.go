// Package reports turns archived runs into the document a cluster engineer
// hands over after testing a machine: a title page with a verdict computed
// from the data, the system as its provenance describes it, the runs, and
// per benchmark the figures and summary tables the articles sbench was
// designed from show — bandwidth and latency against message size,
// collectives per process count, node-pair heatmaps, HPL's table with its
// residual checks, scaling against the process count — and an appendix
// that traces every number back to the tool's own output.
//
// The caller queries the archive, fills a Data and calls Write, or New to
// read the figures, verdict and warnings before writing:
//
//	r, err := reports.New(reports.Data{Runs: runs, Samples: samples, Generated: now}, reports.WithFontSearch())
//	_, err = r.WriteTo(w)
//
// A report of an archive's years gives the runs in Data and the rest
// through a Source (NewFrom): the report reads the samples one at a time,
// keeping a value per plotted point, and only the outputs of the runs its
// appendix quotes.
//
// # At archive scale
//
// A report over several systems or campaigns, more than a week or 100 runs
// opens with an overview on its title page, the verdict after it (Report.Overview, computed by compare's
// OverviewBuilder from the same walk over the samples): per system,
// benchmark and configuration a key figure over time, its latest value,
// trend, changes of level with what changed in provenance, and failures.
// Beyond 60 runs the runs section sums them up per system and benchmark and
// lists the newest failed ones; beyond 50, the appendix quotes the newest
// failed and invalid runs only (WithAppendix), and beyond 30 HPL rows the
// HPL table sums them up per configuration. Each says what it left out and
// how to see it. A configuration is named by its system first.
//
// # What is computed
//
// Runs are grouped into families (the benchmark: osu_bw, allreduce, hpl;
// NetPIPE's modules are one family) and, within a family, into
// configurations: the campaign variant, else the labels runs were ingested
// with (only those that differ between them), else a --group-by label. A
// configuration keeps one colour, glyph and dash in every figure and table.
// Samples at the same size from repeats and runs of a configuration become
// one point: their median, with their minimum and maximum drawn as a band.
// Failed and invalid runs never become a point, a peak or a best figure;
// HPL's invalid rows are shown struck through with the checks they failed.
//
// The verdict and the summary tables (peak bandwidth and where it is
// reached, its share of the link's theoretical rate, N½, latency at the
// smallest size, ratios between configurations, the slowest node pair, the
// best valid HPL result against Rpeak) are computed from those points;
// nothing in them is typed by hand. The verdict quotes each figure as the
// median of its runs, with their count and range (a latency kernel's by
// the median of its iterations), and states a factor between two
// configurations only when every run of one is beyond every run of the
// other and an exact Mann-Whitney test of the runs gives p ≤ 0.05 (4 runs
// each). A link rate is that of an interface the runs' traffic crossed
// (results.Host.Traffic): none for traffic that stayed on one machine.
//
// # Drawing
//
// Figures are gonum/plot plots drawn straight into the PDF as vector
// graphics by typeset.Canvas, an implementation of vg.Canvas on a region of
// a gofpdf page; package typeset sets the pages, knowing nothing of
// benchmarks. Text stays text: titles, labels, tick labels, legends and heatmap
// cells can be searched and extracted with pdftotext, and a 100-figure
// report stays small because nothing is rasterised. The same plots can be
// saved as PNG, SVG or PDF files (SaveFigures) and their data as CSV
// (WriteCSV).
//
// Text is set in the PDF core fonts (Helvetica, Courier), metric-compatible
// with the Liberation fonts gonum/plot measures text with, so labels land
// where the plot placed them and no font is embedded. Those fonts cover
// Windows-1252 only. A report whose text needs more — the Japanese and
// Korean titles of the articles — is set in a TrueType font instead, given
// with WithFont or found by WithFontSearch, embedded (as a subset) and
// used for the figures too. Without one, such characters print as '?' and
// the title page and Warnings say which font to install, rather than
// showing empty boxes.
//
// # HTML
//
// WriteHTML writes the same report as one self-contained HTML page: the
// sections write their content once — headings, paragraphs, tables,
// figures, quotes — and the PDF and the page each render it, so the page
// cannot drift from the PDF. Figures are the same plots drawn as inline SVG by
// gonum's vgsvg (package svgplot), with their points' value, size and runs
// on hover and their series toggled from the legend; tables sort by a
// click; nothing is loaded from anywhere (package webpage).
//
// Output is deterministic: the same Data gives the same bytes, because the
// PDF's dates come from Data.Generated, its catalogues are sorted, and every
// list the report shows is sorted before it is drawn.
package reports
