// Package hpl owns everything HPL: generating HPL.dat and HPCC's hpccinf.txt
// from campaign parameters, sizing N, NB, P and Q from the nodes' memory,
// parsing HPL and HPCC output with its residual checks, and a native LU
// kernel that validates its result the way HPL does.
//
// A result whose residual check failed is invalid: it is kept, shown struck
// through, and never counted as a best or reference figure.
package hpl
