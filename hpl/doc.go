// Package hpl owns everything HPL: generating HPL.dat and HPCC's hpccinf.txt
// from campaign parameters, sizing N, NB, P and Q from the nodes' memory,
// parsing HPL and HPCC output with its residual checks, and a native LU
// kernel that validates its result the way HPL does.
//
// A result whose residual check failed is invalid: it is kept, shown struck
// through, and never counted as a best or reference figure.
//
// # Reading HPL and HPCC output
//
// ParseHPL reads xhpl output, from HPLinpack 1.0a (three scaled residuals,
// "||Ax-b||_oo / ( eps * ||A||_1  * N        )") to 2.3 (one,
// "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)"), and vendor builds
// that keep HPL's table (Intel MKL's, HPL-NVIDIA's). Every T/V row becomes
// one bundle: scalars n, nb, p, q, time_s, gflops, the residuals and the
// norms HPL prints; one check per residual against the printed threshold;
// and as parameters the T/V code decoded the way HPL_pdtest builds it, the
// parameter block, eps and the HPL_pdgesv() start and end times. A row
// that failed a check, a run cut before "End of Tests." and a run made
// without checks (threshold 0) are invalid, each with its reason. A log
// may hold several runs; each run's closing summary must agree with its
// rows. Reader gives the rows one at a time, in the shape of bufio.Scanner.
//
// ParseHPCC reads HPC Challenge's hpccoutf.txt: the tests of its HPL
// section (benchmark "hpcc-hpl"), and one "hpcc" bundle with every number
// of the closing summary as a snake_case scalar with its unit, HPL's
// residual checks and HPCC's own verdict (Success=0 is invalid).
//
// Both register with package parsers as the formats "hpl" and "hpcc".
package hpl
