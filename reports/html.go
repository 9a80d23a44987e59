package reports

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/reports/typeset"
	"github.com/sbench/sbench/svgplot"
	"github.com/sbench/sbench/webpage"
)

// WriteHTML writes the report as one HTML page that needs nothing else:
// the same sections, verdict, tables, figures and appendix as the PDF, the
// figures as inline SVG drawn from the same plots, the tables sortable by
// a click on a column, each figure's points telling their value, size and
// runs on hover (a click goes to the run in the appendix), and each series
// shown or hidden from the legend.
//
// The page is the PDF's content because both render the same content
// (Report.content): the headings, paragraphs, tables, figures and quotes
// the sections write. No section has an HTML twin to keep in step.
func (r *Report) WriteHTML(w io.Writer) (int64, error) {
	if err := r.saveExtras(); err != nil {
		return 0, err
	}
	sink := &htmlWriter{ids: map[string]int{}}
	sink.render(r.content())
	if sink.err != nil {
		return 0, fmt.Errorf("write html report: %w", sink.err)
	}
	gen := "sbench"
	if r.data.Version != "" {
		gen += " " + r.data.Version
	}
	var page bytes.Buffer
	if err := webpage.Write(&page, webpage.Page{Title: r.title(), Generator: gen, Class: "sb-report", Body: template.HTML(sink.finish())}); err != nil {
		return 0, err
	}
	return page.WriteTo(w)
}

// HTMLWarnings are the Warnings that concern the reader of the HTML page:
// the nodes that differ, not the PDF's fonts (a browser has glyphs for any
// text).
func (r *Report) HTMLWarnings() []string { return hostMismatches(r.runs) }

// saveExtras writes the figures and CSV files the options ask for beside
// the report.
func (r *Report) saveExtras() error {
	if r.opts.figureDir != "" {
		if err := r.SaveFigures(r.opts.figureDir, r.opts.figureFormat); err != nil {
			return err
		}
	}
	if r.opts.csvDir != "" {
		if err := r.WriteCSV(r.opts.csvDir); err != nil {
			return err
		}
	}
	return nil
}

// htmlWriter writes a content as the body of an HTML page.
type htmlWriter struct {
	b bytes.Buffer
	// open is the element later primitives may add to: "ul" (bullets),
	// "dl" (an appendix run's facts), "figure" (waiting for its caption),
	// "" for none.
	open string
	// section is whether a <section> is open; toc the level-2 headings
	// and where the table of contents goes.
	section bool
	toc     [][2]string
	tocAt   int
	ids     map[string]int
	err     error
}

// render writes the blocks of c; those that only lay out the PDF's pages
// (space, page breaks, rules) have no HTML.
func (s *htmlWriter) render(c *content) {
	for _, b := range c.blocks {
		switch b := b.(type) {
		case titleBlock:
			s.title(b.text)
		case headingBlock:
			s.heading(b.text, b.size)
		case paraBlock:
			s.para(b.text, b.style, b.size, b.color)
		case bulletBlock:
			s.bullet(b.text, b.color)
		case warningBlock:
			s.warning(b.head, b.items)
		case figureBlock:
			s.figure(b.f)
		case captionBlock:
			s.caption(b.text)
		case anchorBlock:
			s.anchor(b.id)
		case factBlock:
			s.fact(b.key, b.value, b.color)
		case monoBlock:
			s.mono(b.lines, b.head, b.tail, b.color)
		case *tableBlock:
			s.flush()
			s.writeTable(b)
		}
	}
}

var esc = html.EscapeString

// colorClass names the class of text drawn in c.
func colorClass(c [3]int) string {
	switch c {
	case failedRed:
		return "bad"
	case betterGreen:
		return "good"
	case grey:
		return "muted"
	}
	return ""
}

func classAttr(classes ...string) string {
	var cs []string
	for _, c := range classes {
		if c != "" {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return ""
	}
	return ` class="` + strings.Join(cs, " ") + `"`
}

// id makes a unique element id of text.
func (s *htmlWriter) id(text string) string {
	base := fileName(text)
	s.ids[base]++
	if n := s.ids[base]; n > 1 {
		return fmt.Sprintf("%s-%d", base, n)
	}
	return base
}

// flush closes what is open.
func (s *htmlWriter) flush() {
	if s.open != "" {
		fmt.Fprintf(&s.b, "</%s>\n", s.open)
	}
	s.open = ""
}

func (s *htmlWriter) title(text string) {
	s.flush()
	fmt.Fprintf(&s.b, "<h1>%s</h1>\n", esc(text))
}

func (s *htmlWriter) heading(text string, size float64) {
	s.flush()
	level := 4
	switch {
	case size >= h1Size:
		level = 2
	case size >= h2Size:
		level = 3
	}
	id := s.id(text)
	if level == 2 {
		if s.section {
			s.b.WriteString("</section>\n")
		} else {
			s.tocAt = s.b.Len()
		}
		s.b.WriteString("<section>\n")
		s.section = true
		s.toc = append(s.toc, [2]string{id, text})
	}
	fmt.Fprintf(&s.b, "<h%d id=\"%s\">%s</h%d>\n", level, id, esc(text), level)
}

// para writes a paragraph; one that starts with a bullet is a list item.
func (s *htmlWriter) para(text, style string, size float64, c [3]int) {
	if rest, ok := strings.CutPrefix(text, "• "); ok {
		s.bullet(rest, c)
		return
	}
	s.flush()
	var cls []string
	if strings.Contains(style, "B") {
		cls = append(cls, "b")
	}
	if strings.Contains(style, "I") {
		cls = append(cls, "i")
	}
	if size < bodySize {
		cls = append(cls, "small")
	}
	if strings.Contains(text, "\n") {
		cls = append(cls, "pre-line")
	}
	fmt.Fprintf(&s.b, "<p%s>%s</p>\n", classAttr(append(cls, colorClass(c))...), esc(text))
}

func (s *htmlWriter) bullet(text string, c [3]int) {
	if s.open != "ul" {
		s.flush()
		s.b.WriteString("<ul class=\"bullets\">\n")
		s.open = "ul"
	}
	fmt.Fprintf(&s.b, "<li%s>%s</li>\n", classAttr(colorClass(c)), esc(text))
}

func (s *htmlWriter) warning(head string, items []string) {
	s.flush()
	fmt.Fprintf(&s.b, "<div class=\"warn\" role=\"alert\"><strong>%s</strong><ul>\n", esc(head))
	for _, it := range items {
		fmt.Fprintf(&s.b, "<li>%s</li>\n", esc(it))
	}
	s.b.WriteString("</ul></div>\n")
}

func (s *htmlWriter) writeTable(t *tableBlock) {
	n := len(t.cols)
	for _, r := range t.rows {
		n = max(n, len(r.Cells))
	}
	details := slices.ContainsFunc(t.rows, func(r *typeset.Row) bool { return r.Under != "" })
	// A table of values keyed by their first column (the system table,
	// whose first header is empty) is not something to sort.
	sortable := len(t.rows) > 1 && len(t.cols) > 0 && t.cols[0].title != ""
	fmt.Fprintf(&s.b, "<div class=\"tbl\"><table%s>\n", classAttr(map[bool]string{true: "sb-sort"}[sortable]))
	if len(t.cols) > 0 {
		s.b.WriteString("<thead><tr>")
		for _, c := range t.cols {
			fmt.Fprintf(&s.b, "<th%s>%s</th>", classAttr(map[bool]string{true: "num"}[c.right]), esc(c.title))
		}
		s.b.WriteString("</tr></thead>\n")
	}
	if !details {
		s.b.WriteString("<tbody>\n")
	}
	for _, r := range t.rows {
		if details {
			s.b.WriteString("<tbody>\n")
		}
		class := colorClass(r.Color)
		fmt.Fprintf(&s.b, "<tr%s>", classAttr(class))
		for i := 0; i < n; i++ {
			cell := ""
			if i < len(r.Cells) {
				cell = r.Cells[i]
			}
			var col column
			if i < len(t.cols) {
				col = t.cols[i]
			}
			text := esc(cell)
			if col.runLink {
				if id, err := strconv.ParseInt(cell, 10, 64); err == nil {
					text = fmt.Sprintf("<a href=\"#run-%d\">%d</a>", id, id)
				}
			}
			if strings.Contains(r.FontStyle, "S") && i != r.Plain && cell != "" {
				text = "<s>" + text + "</s>"
			}
			if i == 0 && r.Swatch != nil {
				text = swatchSVG(*r.Swatch) + text
			}
			fmt.Fprintf(&s.b, "<td%s>%s</td>", classAttr(map[bool]string{true: "num"}[col.right]), text)
		}
		s.b.WriteString("</tr>\n")
		if r.Under != "" {
			fmt.Fprintf(&s.b, "<tr%s><td></td><td colspan=\"%d\">%s</td></tr>\n", classAttr("detail", class), max(1, n-1), esc(r.Under))
		}
		if details {
			s.b.WriteString("</tbody>\n")
		}
	}
	if !details {
		s.b.WriteString("</tbody>\n")
	}
	s.b.WriteString("</table></div>\n")
}

// swatchSVG is a configuration's line style, as the tables' key to the
// figures' colours.
func swatchSVG(st typeset.Swatch) string {
	dash := ""
	if len(st.Dash) > 0 {
		var ds []string
		for _, d := range st.Dash {
			ds = append(ds, strconv.FormatFloat(d.Points(), 'f', -1, 64))
		}
		dash = ` stroke-dasharray="` + strings.Join(ds, " ") + `"`
	}
	return fmt.Sprintf(`<svg class="sw" width="22" height="8" viewBox="0 0 22 8" aria-hidden="true"><line x1="1" y1="4" x2="21" y2="4" stroke="#%02x%02x%02x" stroke-width="2"%s/></svg>`,
		st.Color.R, st.Color.G, st.Color.B, dash)
}

func (s *htmlWriter) figure(f *Figure) {
	s.flush()
	if f.Plot == nil {
		return
	}
	svg, err := svgplot.Render(f.Plot, f.width(), f.height(), f.Title)
	if err != nil {
		s.err = err
		return
	}
	fmt.Fprintf(&s.b, "<figure class=\"sb-figure\" id=\"fig-%s\">\n", esc(f.Name))
	s.b.Write(svg)
	s.b.WriteByte('\n')
	s.open = "figure"
}

func (s *htmlWriter) caption(text string) {
	if s.open == "figure" {
		fmt.Fprintf(&s.b, "<figcaption>%s</figcaption>\n</figure>\n", esc(text))
		s.open = ""
		return
	}
	s.flush()
	fmt.Fprintf(&s.b, "<p class=\"caption small\">%s</p>\n", esc(text))
}

// anchor marks where a run's part of the appendix starts, for the links
// of the runs table and of the figures' points.
func (s *htmlWriter) anchor(id string) {
	s.flush()
	fmt.Fprintf(&s.b, "<div class=\"anchor\" id=\"%s\"></div>\n", esc(id))
}

func (s *htmlWriter) fact(k, v string, c [3]int) {
	if s.open != "dl" {
		s.flush()
		s.b.WriteString("<dl class=\"facts\">\n")
		s.open = "dl"
	}
	fmt.Fprintf(&s.b, "<dt>%s</dt><dd%s>%s</dd>\n", esc(k), classAttr(colorClass(c)), esc(v))
}

// mono quotes lines as the PDF does: the first head and last tail, with
// the count of what is left out between them.
func (s *htmlWriter) mono(lines []string, head, tail int, c [3]int) {
	lines = typeset.CutLines(lines, head, tail)
	pre := fmt.Sprintf("<pre%s>%s</pre>", classAttr(colorClass(c)), esc(strings.Join(lines, "\n")))
	if s.open == "dl" {
		fmt.Fprintf(&s.b, "<dd class=\"wide\">%s</dd>\n", pre)
		return
	}
	s.flush()
	s.b.WriteString(pre + "\n")
}

// finish closes what is open and puts the table of contents before the
// first section.
func (s *htmlWriter) finish() string {
	s.flush()
	if s.section {
		s.b.WriteString("</section>\n")
	}
	body := s.b.String()
	if len(s.toc) < 2 {
		return body
	}
	var nav strings.Builder
	nav.WriteString("<nav class=\"toc\" aria-label=\"Contents\"><ol>\n")
	for _, e := range s.toc {
		fmt.Fprintf(&nav, "<li><a href=\"#%s\">%s</a></li>\n", e[0], esc(e[1]))
	}
	nav.WriteString("</ol></nav>\n")
	return body[:s.tocAt] + nav.String() + body[s.tocAt:]
}
