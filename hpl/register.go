package hpl

import "github.com/sbench/sbench/parsers"

func init() {
	parsers.Register(parsers.Format{
		Name:  "hpl",
		Tools: "HPL's xhpl (HPLinpack 1.0a to 2.3, and vendor builds that keep its table: Intel MKL, HPL-NVIDIA)",
		Sniff: sniffHPL,
		Parse: ParseHPL,
	})
	parsers.Register(parsers.Format{
		Name:  "hpcc",
		Tools: "HPC Challenge's hpcc (hpccoutf.txt, 1.5.0 and its HPL section)",
		Sniff: sniffHPCC,
		Parse: ParseHPCC,
	})
}
