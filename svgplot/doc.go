// Package svgplot draws gonum/plot plots as SVG for HTML pages that must
// work on their own — an air-gapped cluster's file share, file:// — with
// the interaction a browser reader expects: the lines of one series can be
// shown and hidden from the legend, and each point says on hover what it
// is (value, size, the runs behind it) and links to its source.
//
// The plot is drawn by gonum's vgsvg, so an HTML figure is the same plot,
// drawn by the same code, as the PDF's and the PNG files'. What vgsvg has
// no notion of — which of its paths belong to which series, where the data
// points are — is added around it:
//
//   - Group wraps a plotter (a line, a scatter, a band) so that its paths
//     end up in one <g class="sb-s" data-s="N"> element, and Begin/End do
//     the same for a legend entry (class "sb-leg"). On any other canvas
//     (the report's PDF canvas, vgimg) they draw exactly as the plotter
//     alone: the plot is built once and drawn everywhere.
//   - Points marks hover targets in data coordinates: Render turns them
//     into transparent circles above the figure carrying data-s, data-tip
//     and data-href attributes, which a page's script shows as a tooltip
//     and follows on click.
//
// vgsvg cannot write an element of the caller's, so a group is marked in
// its output by a transform nobody else writes — a rotation by a whole
// number of turns above a million, an identity — and Render replaces each
// by the group's real attributes. Render also drops the XML prologue, sets
// the size by the viewBox so CSS can scale the figure, and gives every
// font a fallback the reader's system has: nothing is fetched, no font is
// embedded.
package svgplot
