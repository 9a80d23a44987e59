package campaign

// Expect is one [[expect]] table of a campaign or of a site profile: what
// a figure must be, an acceptance reference rather than a run's sanity
// check (a benchmark's checks). It binds a benchmark, a metric and a point
// to a bound; `sbench check` judges the median of the selected runs
// against it.
type Expect struct {
	// Name is how the expectation is shown; default "BENCHMARK METRIC@AT".
	Name string `toml:"name"`
	// Benchmark is the campaign's benchmark (a [[benchmark]] name).
	Benchmark string `toml:"benchmark"`
	// Metric is the metric judged (bandwidth, latency, timesteps_per_s…).
	Metric string `toml:"metric"`
	// At is the point: an x such as a message size ("4MiB", "4194304"),
	// "best" for the best value over every x, or empty for a metric that
	// has no x.
	At string `toml:"at"`
	// Bound is the bound the median must keep: an operator (>=, <=, >, <)
	// and an absolute value with its unit (">= 24 GB/s"), a factor of
	// what the runs' provenance knows (">= 0.9 * link_rate",
	// ">= 0.75 * rpeak"), or a baseline's median and a margin
	// (">= baseline:pre-upgrade - 5%").
	Bound string `toml:"bound"`
	// Where narrows the runs judged, as a selector of sbench compare
	// ("ntasks_per_node=1", "variant=tcp").
	Where string `toml:"where"`
	// System limits the expectation to the runs of one system; a site
	// profile's expectations are its system's.
	System string `toml:"system"`
}
