package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/sbench/sbench/internal/testenv"
)

// browser is a headless Chromium driven through the DevTools protocol: it
// records every request the page makes and every console message, so a
// test can say that a page loaded nothing from outside its directory and
// ran its script without an error.
type browser struct {
	t        *testing.T
	ctx      context.Context
	mu       sync.Mutex
	requests []string
	console  []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := testenv.LookPath(t, "chromium", "chromium")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx}
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.requests = append(b.requests, e.Request.URL)
		}
	})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m.String())
			b.mu.Unlock()
		}
	}()
	return b
}

// open loads a file and waits for it.
func (b *browser) open(path string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		b.t.Fatalf("open %s: %v", path, err)
	}
}

// follow clicks the link css selects and waits for the page it opens to
// load. A wait for an element alone could find it on the page before: the
// click only starts the navigation.
func (b *browser) follow(css string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(css))); err != nil {
		b.t.Fatalf("follow %s: %v", css, err)
	}
}

// do runs actions, failing the test on an error.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// hover moves the mouse onto the first element matching css.
func (b *browser) hover(css string) {
	b.t.Helper()
	xy := eval[[]float64](b, fmt.Sprintf(`(function(){var e=document.querySelector(%q); e.scrollIntoView({block:'center'});
		var r=e.getBoundingClientRect(); return [r.left+r.width/2, r.top+r.height/2];})()`, css))
	b.do("hover "+css, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, xy[0], xy[1]))
}

// screenshot saves the whole page as name in the screenshot directory:
// $SBENCH_SCREENSHOT_DIR (CI keeps it with its log), else the test's own.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	dir := os.Getenv("SBENCH_SCREENSHOT_DIR")
	if dir == "" {
		dir = b.t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s (%d bytes)", path, len(png))
}

// check says what the page did wrong: a request outside dir (anything
// but its own files and data: URLs), a console message.
func (b *browser) check(dir string) {
	b.t.Helper()
	time.Sleep(200 * time.Millisecond) // let the last console events arrive
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, u := range b.requests {
		if !strings.HasPrefix(u, "file://"+dir+"/") && !strings.HasPrefix(u, "data:") {
			b.t.Errorf("request outside the page's files: %s", u)
		}
	}
	if len(b.requests) == 0 {
		b.t.Error("no request recorded: the recorder records nothing")
	}
	for _, m := range b.console {
		b.t.Errorf("console: %s", m)
	}
	b.requests, b.console = nil, nil
}

// The HTML report of article 004 and article 000's HPL runs, in a real
// browser: it loads nothing from outside, its script runs without an
// error, the verdict and the key numbers are in the rendered page, tables
// sort, the legend hides a series, a point tells its value on hover.
func TestBrowserReport(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	ingestAcceptance(t, db)
	page := filepath.Join(dir, "report.html")
	stdout, stderr, code := sbench(t, "report", "--db", db, "-o", page, "--title", "eRDMA vs TCP, and HPL")
	if code != 0 {
		t.Fatalf("report: %s", stderr)
	}
	var verdict []string
	for _, l := range strings.Split(stdout, "\n")[1:] {
		if l = strings.TrimSpace(l); l != "" {
			verdict = append(verdict, l)
		}
	}
	b.open(page)

	got := eval[[]string](b, `Array.from(document.querySelectorAll('#verdict ~ ul.bullets li')).map(function(li){return li.innerText.trim()})`)
	if !slices.Equal(got, verdict) {
		t.Errorf("rendered verdict:\n%q\nsbench report's:\n%q", got, verdict)
	}
	text := eval[string](b, `document.body.innerText`)
	for _, want := range []string{"6264.41", "16.07", "11.01", "7.240e+00", "INVALID", "FAILED", "WR10R2C4", "# OSU MPI Bandwidth Test v7.5"} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered page lacks %q", want)
		}
	}
	if n := eval[int](b, `document.querySelectorAll('svg.sb-fig').length`); n != 3 {
		t.Errorf("%d figures rendered, want 3", n)
	}
	b.screenshot("report.png")

	// Sort the runs table by status: the two invalid HPL runs go first
	// (descending: "ok" < "invalid" is false), then back.
	col := func(table string, i int) []string {
		return eval[[]string](b, fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(function(tr){return tr.cells[%d].innerText.trim()})`, table+" tbody tr:not(.detail)", i))
	}
	runs := `#runs ~ .tbl table`
	before := col(runs, 0)
	b.do("sort by run", chromedp.Click(chromedp.CSS(runs+" th:nth-child(1)")))
	asc := col(runs, 0)
	b.do("sort by run again", chromedp.Click(chromedp.CSS(runs+" th:nth-child(1)")))
	desc := col(runs, 0)
	if !slices.Equal(asc, before) || !slices.Equal(desc, []string{"6", "5", "4", "3", "2", "1"}) {
		t.Errorf("runs table by run: %v, ascending %v, descending %v", before, asc, desc)
	}
	// A size column sorts by size, not by text: "1K" before "128K"… and
	// "8K" before "16K".
	bw := `#benchmark-osu_bw ~ .tbl table`
	b.do("sort by peak", chromedp.Click(chromedp.CSS(bw+" th:nth-child(2)")))
	if peaks := col(bw, 1); !slices.Equal(peaks, []string{"3160.96", "6264.41"}) {
		t.Errorf("bandwidth table by peak, ascending: %v", peaks)
	}
	b.do("sort by N½", chromedp.Click(chromedp.CSS(bw+" th:nth-child(5)")))
	if half := col(bw, 4); !slices.Equal(half, []string{"8K", "16K"}) {
		t.Errorf("bandwidth table by N½, ascending: %v", half)
	}

	// The legend hides tcp's line in the bandwidth figure, and shows it again.
	fig := `#fig-osu_bw-bandwidth svg`
	hidden := fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).filter(function(g){return getComputedStyle(g).display==='none'}).length`, fig+` .sb-s[data-s="1"]`)
	if n := eval[int](b, hidden); n != 0 {
		t.Fatalf("%d of tcp's groups hidden before any click", n)
	}
	b.do("toggle tcp", chromedp.Click(chromedp.CSS(fig+` .sb-leg[data-s="1"]`)))
	all := eval[int](b, fmt.Sprintf(`document.querySelectorAll(%q).length`, fig+` .sb-s[data-s="1"]`))
	if n := eval[int](b, hidden); n == 0 || n != all {
		t.Errorf("after a click on tcp's legend entry %d of its %d groups are hidden", n, all)
	}
	if n := eval[int](b, fmt.Sprintf(`document.querySelectorAll(%q).length`, fig+` .sb-s[data-s="0"].sb-hidden`)); n != 0 {
		t.Errorf("erdma's line hidden too")
	}
	b.screenshot("report-tcp-hidden.png")
	b.do("toggle tcp back", chromedp.Click(chromedp.CSS(fig+` .sb-leg[data-s="1"]`)))
	if n := eval[int](b, hidden); n != 0 {
		t.Errorf("%d of tcp's groups still hidden after the second click", n)
	}

	// Hover on erdma's peak: the tooltip says its value, size and run.
	b.hover(fig + ` circle[data-tip*="32 KiB: 6264.41"]`)
	tip := eval[string](b, `(function(){var t=document.getElementById('sb-tip'); return t.hidden ? '' : t.innerText})()`)
	if !strings.Contains(tip, "erdma") || !strings.Contains(tip, "32 KiB: 6264.41 MB/s") || !strings.Contains(tip, "run 3") {
		t.Errorf("tooltip on erdma's peak: %q", tip)
	}

	// Printed (A4, as the browser's print does it), the page keeps its
	// verdict and figures and drops the tooltip and the contents.
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4)))
	if err != nil {
		t.Fatalf("print: %v", err)
	}
	printed := filepath.Join(dir, "printed.pdf")
	if err := os.WriteFile(printed, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	checkPDF(t, printed, []string{"Verdict", "6264.41 MB/s at 32 KiB", "bandwidth vs message size", "INVALID", "Appendix: runs"})
	// The contents (which name every section) are not printed: the first
	// "Benchmark: osu_bw" is the section's own heading, after the verdict.
	if out, _ := exec.Command("pdftotext", printed, "-").Output(); strings.Index(string(out), "Benchmark: osu_bw") < strings.Index(string(out), "\nVerdict\n") {
		t.Error("the printed page has the table of contents")
	}
	b.check(dir)
}

// A generated site in a real browser: the index, a history page and a run
// page load nothing from outside the site, run without an error, show
// their numbers; the history chart's parts hide from their buttons.
func TestBrowserSite(t *testing.T) {
	b := newBrowser(t)
	db := synthArchive(t, siteSpec)
	dir := filepath.Join(t.TempDir(), "site")
	if _, stderr, code := sbench(t, "site", "--db", db, "-o", dir); code != 0 {
		t.Fatalf("site: %s", stderr)
	}
	b.open(filepath.Join(dir, "index.html"))
	text := eval[string](b, `document.body.innerText`)
	for _, want := range []string{"alpha", "beta", "2 regressions", "-19.7%", "kernel: 5.14.0-362.8.1.el9_3.x86_64 → 5.14.0-427.13.1.el9_4.x86_64"} {
		if !strings.Contains(text, want) {
			t.Errorf("index lacks %q", want)
		}
	}
	b.screenshot("site-index.png")
	b.check(dir)

	// Follow the regression's link to its history page.
	href := eval[string](b, `document.querySelector('.cell-line .mark.worse').parentNode.querySelector('a').getAttribute('href')`)
	b.follow(`a[href="` + href + `"]`)
	b.do("wait for the chart", chromedp.WaitReady(chromedp.CSS("svg.sb-fig")))
	if url := eval[string](b, `location.href`); url != "file://"+filepath.Join(dir, href) {
		t.Errorf("followed to %s", url)
	}
	if n := eval[int](b, `document.querySelectorAll('tr.step[data-change="worse"]').length`); n == 0 {
		t.Error("history page has no regression row")
	}
	band := `#fig-chart-0 svg .sb-s[data-s="1"]`
	shown := fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).filter(function(g){return getComputedStyle(g).display!=='none'}).length`, band)
	if n := eval[int](b, shown); n == 0 {
		t.Fatal("no control band drawn")
	}
	b.hover(`#fig-chart-0 svg circle[data-tip]`)
	if tip := eval[string](b, `document.getElementById('sb-tip').innerText`); !strings.Contains(tip, "run ") {
		t.Errorf("history tooltip: %q", tip)
	}
	b.screenshot("site-history.png")
	b.do("hide the band", chromedp.Click(chromedp.CSS(`button.sb-toggle[data-fig="fig-chart-0"][data-s="1"]`)))
	if n := eval[int](b, shown); n != 0 {
		t.Errorf("%d band groups still shown after the button", n)
	}
	b.check(dir)

	// A run page, from a point of the chart.
	run := eval[string](b, `document.querySelector('#fig-chart-0 circle[data-href]').getAttribute('data-href')`)
	b.open(filepath.Join(dir, "h", run))
	text = eval[string](b, `document.body.innerText`)
	for _, want := range []string{"# OSU MPI Bandwidth Test v7.4", "mlx5_0 port 1 ACTIVE", "Samples (40)"} {
		if !strings.Contains(text, want) {
			t.Errorf("run page %s lacks %q", run, want)
		}
	}
	b.check(dir)
}
