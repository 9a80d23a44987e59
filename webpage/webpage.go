// Package webpage writes the shell of every page of sbench's HTML views —
// the HTML report and the static site: the document around a body that is
// already HTML (figures are inline SVG from package svgplot, images data:
// URLs), with its style sheet (assets/page.css: a laptop screen and print)
// and its script (assets/page.js, no library: sorts a table of class
// sb-sort by the column whose header is clicked, shows a figure point's
// tooltip on hover and follows its link on click, and hides or shows a
// series when its legend entry or sb-toggle button is clicked).
//
// A page comes in one of two forms (Page.Assets):
//
//   - standalone (Assets empty; the HTML report): the style sheet and the
//     script are inlined, and the Content-Security-Policy lets the page
//     load nothing but data: images, so it shows the same from a web
//     server, a file share or file:// on an air-gapped cluster;
//   - sharing (Assets set; the static site): the page links StyleFile and
//     ScriptFile in the directory Assets names, which the site writes once
//     (Style, Script), and the policy allows those from the page's own
//     origin ('self') besides inline styles and data: images. AssetsHash
//     changes when either file does, so the site knows its pages are stale.
package webpage

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
)

//go:embed assets/page.css
var css string

//go:embed assets/page.js
var script string

// Page is one HTML page.
type Page struct {
	Title string
	// Generator names what wrote the page ("sbench 1.2"), for its meta tag.
	Generator string
	// Body is the page's content, already HTML.
	Body template.HTML
	// Class is the class of the page's <main> element ("sb-report",
	// "sb-site"), for the style sheet.
	Class string
	// Assets, when set, is the relative path of the directory holding
	// StyleFile and ScriptFile ("../" from a page one level down): the
	// pages of a site share them instead of carrying them, and may load
	// them, and nothing else. Empty embeds them: a page that stands alone.
	Assets string
}

// The files a site's pages share (Page.Assets).
const (
	StyleFile  = "sbench.css"
	ScriptFile = "sbench.js"
)

// Style and Script are the pages' style sheet and script, for a site to
// write as StyleFile and ScriptFile.
func Style() []byte  { return []byte(css) }
func Script() []byte { return []byte(script) }

var shell = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{{if .Assets}}<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'self' 'unsafe-inline'; script-src 'self'">
{{else}}<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
{{end}}{{with .Generator}}<meta name="generator" content="{{.}}">
{{end}}<title>{{.Title}}</title>
{{if .Assets}}<link rel="stylesheet" href="{{.Assets}}sbench.css">
{{else}}<style>{{.CSS}}</style>
{{end}}</head>
<body>
<main class="{{.Class}}">
{{.Body}}
</main>
<div id="sb-tip" role="tooltip" hidden></div>
{{if .Assets}}<script src="{{.Assets}}sbench.js"></script>
{{else}}<script>{{.JS}}</script>
{{end}}
</body>
</html>
`))

// Write writes p to w as a complete HTML document.
func Write(w io.Writer, p Page) error {
	class := p.Class
	if class == "" {
		class = "sb-page"
	}
	err := shell.Execute(w, struct {
		Title, Generator, Class, Assets string
		Body                            template.HTML
		CSS                             template.CSS
		JS                              template.JS
	}{p.Title, p.Generator, class, p.Assets, p.Body, template.CSS(css), template.JS(script)})
	if err != nil {
		return fmt.Errorf("write page %q: %w", p.Title, err)
	}
	return nil
}

// AssetsHash identifies the pages' style sheet and script: a page written
// with other assets looks or behaves otherwise, whatever its content.
func AssetsHash() string {
	sum := sha256.Sum256([]byte(css + "\x00" + script))
	return hex.EncodeToString(sum[:8])
}
