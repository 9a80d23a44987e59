package site

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
	"github.com/sbench/sbench/webpage"
)

// Options configure a build.
type Options struct {
	// Dir is the site's directory, made when missing.
	Dir string
	// Filter selects the runs the site shows (the filter flags).
	Filter store.Filter
	// Generator names what writes the site ("sbench 1.2").
	Generator string
	// Threshold, Window and Alpha are sbench history's: the smallest step
	// that is a regression (a fraction), the control band's window and a
	// step's significance. Zero values are history's defaults.
	Threshold float64
	Window    int
	Alpha     float64
	// AllSizes builds the history of every size, not only the key sizes
	// (the smallest and the largest): steps in the middle of a curve (an
	// MPI's eager limit moved) are found too, at about ten times the cost.
	AllSizes bool
	// Log, when set, gets a line per stage.
	Log io.Writer
}

// Stats says what a build did.
type Stats struct {
	Runs, Histories int
	// Written are the pages written, Removed those removed, both sorted;
	// Kept counts the pages left as they were.
	Written, Removed []string
	Kept             int
}

// ManifestName is the manifest's file name in the site's directory.
const ManifestName = ".sbench-site.json"

// format is the version of the pages' layout: a change to what a page
// shows bumps it, so that every page is made again.
const format = "sbench-site/1"

type manifest struct {
	Format string `json:"format"`
	// Pages maps a page's path (slash-separated, relative) to what it was
	// made from and what it holds.
	Pages map[string]pageEntry `json:"pages"`
	// Groups maps a history group to its pages' summaries, so that an
	// unchanged group's line on the index needs no samples.
	Groups map[string]groupEntry `json:"groups"`
}

type pageEntry struct {
	Key  string `json:"key"`
	Hash string `json:"hash"`
}

type groupEntry struct {
	Key   string    `json:"key"`
	Pages []summary `json:"pages"`
	// Runs and Axes are the group's runs and the metrics and sizes of
	// their samples, so that the next build asks the archive only about
	// the runs it has not seen.
	Runs []int64            `json:"runs,omitempty"`
	Axes []store.SampleAxis `json:"axes,omitempty"`
	// Values are the samples' values on the axes followed.
	Values []axisValues `json:"values,omitempty"`
}

// summary is what the index shows of a history page.
type summary struct {
	Page      string `json:"page"`
	Cluster   string `json:"cluster"`
	Benchmark string `json:"benchmark"`
	Metric    string `json:"metric"`
	Config    string `json:"config"`
	// Attrs are the configuration's attributes but the cluster, for the
	// index to name it by what tells it apart.
	Attrs  []store.Attr `json:"attrs,omitempty"`
	Unit   string       `json:"unit"`
	Better string       `json:"better,omitempty"`
	X      *float64     `json:"x,omitempty"`
	XUnit  string       `json:"x_unit,omitempty"`
	Latest float64      `json:"latest"`
	// LatestRun ran at LatestWhen; Outside is whether it lies outside its
	// control band.
	LatestRun  int64     `json:"latest_run"`
	LatestWhen time.Time `json:"latest_when"`
	Outside    bool      `json:"outside,omitempty"`
	// Spark is the key size's history, the last sparkPoints values.
	Spark []float64 `json:"spark"`
	Runs  int       `json:"runs"`
	// Changes are the steps at every size, oldest first.
	Changes []change `json:"changes,omitempty"`
}

type change struct {
	X          *float64  `json:"x,omitempty"`
	XUnit      string    `json:"x_unit,omitempty"`
	Run        int64     `json:"run"`
	When       time.Time `json:"when"`
	Delta      float64   `json:"delta"`
	Change     string    `json:"change"`
	Provenance string    `json:"provenance,omitempty"`
}

const sparkPoints = 40

// builder is one build's state.
type builder struct {
	ctx context.Context
	db  *store.DB
	o   Options
	old manifest
	// mu guards new and stats: pages are made by several goroutines.
	mu    sync.Mutex
	new   manifest
	stats Stats
	// assets is the hash of the pages' style and script: a change to
	// them makes every page again.
	assets string
	jobs   map[string]*store.Job
}

// Build writes or updates the site of the runs o.Filter selects in o.Dir.
func Build(ctx context.Context, db *store.DB, o Options) (*Stats, error) {
	if o.Dir == "" {
		return nil, fmt.Errorf("site: no directory")
	}
	if o.Window <= 0 {
		o.Window = compare.DefaultWindow
	}
	if o.Alpha <= 0 {
		o.Alpha = 0.05
	}
	b := &builder{ctx: ctx, db: db, o: o, assets: webpage.AssetsHash(),
		new: manifest{Format: format, Pages: map[string]pageEntry{}, Groups: map[string]groupEntry{}}}
	if err := b.openDir(); err != nil {
		return nil, err
	}
	start := time.Now()
	// EachRun shares what runs have in common (hosts, labels, parameters,
	// commands): a site's 20,000 runs held so take 17 MB instead of the
	// 163 MB of a copy each (db.Runs), and under the command's soft heap
	// limit the difference is a collector that runs all the time. The
	// pages only read the runs.
	var runs []store.Run
	err := db.EachRun(ctx, o.Filter, store.RunOptions{}, func(r *store.Run) error {
		runs = append(runs, *r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("site: %w", compare.ErrNoData)
	}
	b.stats.Runs = len(runs)
	jobs, err := db.Jobs(ctx, "")
	if err != nil {
		return nil, err
	}
	b.jobs = map[string]*store.Job{}
	for i := range jobs {
		if _, dup := b.jobs[jobs[i].SlurmID]; !dup {
			b.jobs[jobs[i].SlurmID] = &jobs[i]
		}
	}
	b.logf("%d runs read in %s", len(runs), time.Since(start).Round(time.Millisecond))

	// The pages' style and script first: no page may name a file that is
	// not there yet.
	if err := b.writeRaw(webpage.StyleFile, "", webpage.Style()); err != nil {
		return nil, err
	}
	if err := b.writeRaw(webpage.ScriptFile, "", webpage.Script()); err != nil {
		return nil, err
	}
	groups := groupRuns(runs)
	entries := make([]groupEntry, len(groups))
	err = parallel(ctx, len(groups), func(i int) error {
		var err error
		entries[i], err = b.group(groups[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	pagesOfRun := map[int64][]link{}
	var sums []summary
	for i, g := range groups {
		ge := entries[i]
		for _, s := range ge.Pages {
			for _, r := range g.runs {
				pagesOfRun[r.ID] = append(pagesOfRun[r.ID], link{path: s.Page, text: s.Metric})
			}
		}
		sums = append(sums, ge.Pages...)
	}
	b.stats.Histories = len(sums)
	b.logf("%d history pages of %d configurations in %s", len(sums), len(groups), time.Since(start).Round(time.Millisecond))

	err = parallel(ctx, len(runs), func(i int) error { return b.runPage(&runs[i], pagesOfRun[runs[i].ID]) })
	if err != nil {
		return nil, err
	}
	b.logf("%d run pages in %s", len(runs), time.Since(start).Round(time.Millisecond))
	if err := b.index(sums, runs); err != nil {
		return nil, err
	}
	if err := b.finish(); err != nil {
		return nil, err
	}
	b.logf("%d pages written, %d kept, %d removed in %s", len(b.stats.Written), b.stats.Kept, len(b.stats.Removed),
		time.Since(start).Round(time.Millisecond))
	slices.Sort(b.stats.Written)
	slices.Sort(b.stats.Removed)
	return &b.stats, nil
}

func (b *builder) logf(format string, args ...any) {
	if b.o.Log != nil {
		fmt.Fprintf(b.o.Log, "site: "+format+"\n", args...)
	}
}

// openDir makes the directory or reads its manifest. A directory with
// files but no manifest is not a site: writing index.html there could
// overwrite someone's.
func (b *builder) openDir() error {
	path := filepath.Join(b.o.Dir, ManifestName)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &b.old); err != nil {
			return fmt.Errorf("site manifest %s: %w (remove it to make the site anew)", path, err)
		}
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("site manifest: %w", err)
	}
	entries, err := os.ReadDir(b.o.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(b.o.Dir, 0o755); err != nil {
			return fmt.Errorf("site: %w", err)
		}
	case err != nil:
		return fmt.Errorf("site: %w", err)
	case len(entries) > 0:
		return &NotSiteError{Dir: b.o.Dir}
	}
	// An empty manifest first: the directory is a site from now on, even
	// if this build is interrupted before it lists its pages.
	data, err = json.Marshal(manifest{Format: format, Pages: map[string]pageEntry{}, Groups: map[string]groupEntry{}})
	if err != nil {
		return fmt.Errorf("site manifest: %w", err)
	}
	return results.WriteAtomic(path, data, 0o644)
}

// parallel calls fn(0) … fn(n-1) on a goroutine per core, and returns the
// first error (after which no new call starts) or the context's.
func parallel(ctx context.Context, n int, fn func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				err := ctx.Err()
				if err == nil {
					err = fn(i)
				}
				if err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// NotSiteError says a directory has files but no site's manifest: Build
// will not write pages among someone's files.
type NotSiteError struct{ Dir string }

func (e *NotSiteError) Error() string {
	return fmt.Sprintf("site: %s is not empty and holds no sbench site (%s): choose a new or empty directory", e.Dir, ManifestName)
}

// fresh reports whether page can stay as it is: made from key, and there.
func (b *builder) fresh(page, key string) bool {
	e, ok := b.old.Pages[page]
	if !ok || e.Key != key || b.old.Format != format {
		return false
	}
	_, err := os.Stat(filepath.Join(b.o.Dir, filepath.FromSlash(page)))
	return err == nil
}

// keep records page as it is.
func (b *builder) keep(page string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.new.Pages[page] = b.old.Pages[page]
	b.stats.Kept++
}

// write records page as made from key and writes it when its content
// changed. The write goes through a temporary file and a rename, so the
// page is whole or as it was; durability comes from finish's one sync.
func (b *builder) write(page, key string, p webpage.Page) error {
	var buf bytes.Buffer
	p.Generator = b.o.Generator
	if err := webpage.Write(&buf, p); err != nil {
		return err
	}
	return b.writeRaw(page, key, buf.Bytes())
}

// writeRaw is write for a file of any kind: the pages' shared style and
// script.
func (b *builder) writeRaw(page, key string, data []byte) error {
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	path := filepath.Join(b.o.Dir, filepath.FromSlash(page))
	unchanged := false
	if old, ok := b.old.Pages[page]; ok && old.Hash == hash {
		_, err := os.Stat(path)
		unchanged = err == nil
	}
	if !unchanged {
		if err := writeFile(path, data); err != nil {
			return err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.new.Pages[page] = pageEntry{Key: key, Hash: hash}
	if unchanged {
		b.stats.Kept++
	} else {
		b.stats.Written = append(b.stats.Written, page)
	}
	return nil
}

func writeFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// finish removes the pages no longer made, syncs what was written and
// replaces the manifest.
func (b *builder) finish() error {
	for _, page := range slices.Sorted(maps.Keys(b.old.Pages)) {
		if _, ok := b.new.Pages[page]; ok {
			continue
		}
		if err := os.Remove(filepath.Join(b.o.Dir, filepath.FromSlash(page))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("site: remove %s: %w", page, err)
		}
		b.stats.Removed = append(b.stats.Removed, page)
	}
	if err := b.sync(); err != nil {
		return err
	}
	data, err := json.Marshal(b.new)
	if err != nil {
		return fmt.Errorf("site manifest: %w", err)
	}
	return results.WriteAtomic(filepath.Join(b.o.Dir, ManifestName), data, 0o644)
}

// syncThreshold is the number of pages written above which one sync of
// the whole file system is cheaper than a sync per page.
const syncThreshold = 256

// sync makes the pages written durable before the manifest says they are
// there: page by page (and their directories) for a nightly update, whose
// time must not depend on what else the machine has not yet written; with
// one syncfs for a build of thousands, where a sync per page would cost
// minutes.
func (b *builder) sync() error {
	if len(b.stats.Written) > syncThreshold || len(b.stats.Removed) > syncThreshold {
		d, err := os.Open(b.o.Dir)
		if err != nil {
			return fmt.Errorf("site: sync %s: %w", b.o.Dir, err)
		}
		defer d.Close()
		if err := unix.Syncfs(int(d.Fd())); err != nil {
			return fmt.Errorf("site: sync %s: %w", b.o.Dir, err)
		}
		return nil
	}
	dirs := map[string]bool{b.o.Dir: true}
	for _, page := range append(slices.Clone(b.stats.Written), b.stats.Removed...) {
		path := filepath.Join(b.o.Dir, filepath.FromSlash(page))
		dirs[filepath.Dir(path)] = true
		if slices.Contains(b.stats.Removed, page) {
			continue
		}
		if err := syncPath(path); err != nil {
			return err
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if err := syncPath(d); err != nil {
			return err
		}
	}
	return nil
}

func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("site: sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("site: sync %s: %w", path, err)
	}
	return nil
}

// keyOf hashes what a page is made from, with the layout's version and the
// pages' assets.
func (b *builder) keyOf(parts ...string) string {
	h := sha256.New()
	io.WriteString(h, format+"\x00"+b.assets+"\x00")
	for _, p := range parts {
		io.WriteString(h, p)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// link is a link to a page of the site, from the site's root.
type link struct{ path, text string }

// runPath is a run's page.
func runPath(id int64) string { return "runs/" + strconv.FormatInt(id, 10) + ".html" }
