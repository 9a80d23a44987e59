// Package reports turns archived runs into the documents cluster engineers
// otherwise assemble by hand: a PDF with a title page, the table of runs,
// bandwidth and latency curves per benchmark with their key figures, and the
// failed runs with their errors.
//
// Figures are built as gonum/plot plots and drawn straight into the PDF as
// vector graphics by Canvas, an implementation of vg.Canvas on a region of a
// gofpdf page. Text stays text: axis labels, tick labels and legend entries
// can be selected, searched and extracted with pdftotext, and a 100-figure
// report stays small because nothing is rasterised. The same plots can be
// saved as PNG or SVG files (Report.SaveFigures) for slides and wikis.
//
// The package reads only store and results types. The caller queries the
// archive, fills a Data and calls Write:
//
//	err := reports.Write(w, reports.Data{Title: "...", Runs: runs, Samples: samples, Generated: now})
//
// Output is deterministic: the same Data gives the same bytes, because the
// PDF's dates come from Data.Generated, its catalogues are sorted, and every
// list the report shows is sorted before it is drawn.
//
// Text is set in the PDF core fonts (Helvetica, Times, Courier), which are
// metric-compatible with the Liberation fonts gonum/plot measures text with,
// so labels land where the plot placed them. The core fonts cover the
// Windows-1252 code page only: "µs", "×" and accented Latin letters render,
// other characters (CJK, for one) are replaced by "?" and the title page says
// so, rather than turning into silent garbage.
package reports
