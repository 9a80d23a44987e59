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
// rows. An excerpt needs neither banner nor T/V header: a whole result row
// (code, N, NB, P, Q, Time, Gflops) as a message quotes it starts a table,
// and the checks after it are its own, as they would be under the header.
// Reader gives the rows one at a time, as every parsers.Reader does.
//
// ParseHPCC reads HPC Challenge's hpccoutf.txt: the tests of its HPL
// section (benchmark "hpcc-hpl"), and one "hpcc" bundle with every number
// of the closing summary as a snake_case scalar with its unit, HPL's
// residual checks and HPCC's own verdict (Success=0 is invalid).
//
// Both register with package parsers as the formats "hpl" and "hpcc".
//
// # Writing HPL.dat and hpccinf.txt
//
// Input holds every value of HPL.dat; DefaultInput has HPL's tuning
// defaults (those of the HPL.dat and hpccinf.txt HPL and HPCC ship), and
// HPLDat and HPCCInf write the files in the shipped layout — byte for byte
// HPCC's sample for its values. HPL reads a list by stepping over each
// value's length plus one, so values start in column 1 and are separated
// by single spaces; the tests read every file back with a model of
// HPL_pdinfo and run the real hpcc on one.
//
// # Sizing and peak
//
// Size picks N as the largest multiple of NB whose matrix (8·N² bytes)
// fits in a fraction of the nodes' memory, and P×Q as the grid over all
// ranks nearest a square with P ≤ Q; it explains each figure and, given a
// rate, the run time (2/3·N³ + 3/2·N² flops). Rpeak is a node's
// theoretical peak, cores × GHz × flops per cycle from its CPU flags, so
// that reports can state Rmax/Rpeak.
package hpl
