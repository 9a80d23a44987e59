// Package site writes a static web site of the archive: what a team looks
// at day to day, as XDMoD's application-kernel charts are looked at, from
// any web server or straight from file:// on a cluster with no service to
// run and no network.
//
// The pages share one style sheet and one script (webpage.StyleFile and
// ScriptFile, at the top of the site), which halves a 20,000-run site;
// their policy lets them load those and nothing else. The site has three
// kinds of pages, every link between them relative:
//
//   - index.html: clusters across, benchmarks and metrics down; each cell
//     lists the configurations measured there with their latest value, a
//     sparkline of their history and a mark when the history has a step
//     (red for a regression, green for an improvement) or its latest run
//     lies outside its control band; then the latest steps of the whole
//     archive, newest first.
//   - h/NAME.html, one per benchmark, metric and configuration: the
//     history chart at the key sizes (the largest for bandwidth, the
//     smallest and largest for latency) with its control band and steps,
//     and the steps at every size with the provenance change that explains
//     them — computed by compare.BuildHistory, exactly as sbench history
//     computes them, the sizes of a page being one family
//     (compare.HistoryFamily) — and drawn by package trend.
//   - runs/ID.html, one per run: its facts, hosts and provenance, its
//     samples, scalars and checks, the sbatch script and the tool's whole
//     output, so that every number of the site is one click from its
//     source.
//
// # Incremental
//
// A site of a 20,000-run archive is not rewritten every night. The
// manifest DIR/.sbench-site.json records, for every page, the key of what
// it was made from (the runs of its history, their content hashes, times
// and statuses; the run's own hash, job record and script) and the hash of
// its content. Build renders only the pages whose key changed and writes
// only those whose content changed; a page of a run that left the archive
// is removed, and its history pages and the index are updated. Build
// removes only files the manifest lists, and refuses a directory that is
// not empty and holds no manifest.
//
// Pages are written to a temporary file and renamed into place, so an
// interrupted build leaves each page either as it was or complete; what
// was written is synced before the manifest is replaced (page by page, or
// the whole file system once for a build of thousands), so a manifest
// never names a page that is not on disk.
package site
