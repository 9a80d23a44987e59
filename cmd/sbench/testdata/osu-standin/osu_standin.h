/*
 * A STAND-IN for the OSU Micro-Benchmarks, for sbench's tests only.
 *
 * This is NOT OSU: Debian packages no OSU Micro-Benchmarks, so the tests
 * compile these few lines with the machine's real Open MPI (mpicc) and
 * put them on PATH as osu_latency and osu_bw. They time what OSU's
 * programs time (a blocking ping-pong; windows of non-blocking sends) and
 * print OSU 7.x's output byte for byte in layout (title, "# Datatype:",
 * column header, "%-10d%20.2f" rows), so that sbench's osu parser, report
 * and compare meet the real format. Their numbers say nothing of OSU's.
 *
 * Options, as OSU 7.x reads them: -m [MIN:]MAX message sizes (powers of
 * two from MIN, 0 is followed by 1), -i ITERATIONS, -x WARMUP.
 */
#ifndef OSU_STANDIN_H
#define OSU_STANDIN_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIELD_WIDTH 20
#define FLOAT_PRECISION 2

struct standin_options {
	long min_size, max_size;
	int iterations, warmup;
};

static int standin_options(int argc, char **argv, struct standin_options *o)
{
	int c;
	while ((c = getopt(argc, argv, "m:i:x:")) != -1) {
		char *end;
		switch (c) {
		case 'm':
			if (strchr(optarg, ':')) {
				o->min_size = strtol(optarg, &end, 10);
				if (*end != ':')
					return -1;
				o->max_size = strtol(end + 1, &end, 10);
			} else {
				o->max_size = strtol(optarg, &end, 10);
			}
			if (*end != '\0' || o->min_size < 0 || o->max_size < o->min_size)
				return -1;
			break;
		case 'i':
			o->iterations = atoi(optarg);
			if (o->iterations < 1)
				return -1;
			break;
		case 'x':
			o->warmup = atoi(optarg);
			if (o->warmup < 0)
				return -1;
			break;
		default:
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

/* standin_start initialises MPI and reads the options; it exits (as OSU
 * does) unless there are exactly two processes and the options are good. */
static void standin_start(int *argc, char ***argv, struct standin_options *o, int *rank)
{
	int size;
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (standin_options(*argc, *argv, o) != 0) {
		if (*rank == 0)
			fprintf(stderr, "usage: %s [-m [MIN:]MAX] [-i ITERATIONS] [-x WARMUP]\n", (*argv)[0]);
		MPI_Finalize();
		exit(EXIT_FAILURE);
	}
	if (size != 2) {
		if (*rank == 0)
			fprintf(stderr, "This test requires exactly two processes\n");
		MPI_Finalize();
		exit(EXIT_FAILURE);
	}
}

static void standin_header(int rank, const char *title, const char *column)
{
	if (rank != 0)
		return;
	fprintf(stdout, "# %s v7.4\n", title);
	fprintf(stdout, "# Datatype: MPI_CHAR.\n");
	fprintf(stdout, "%-*s%*s\n", 10, "# Size", FIELD_WIDTH, column);
	fflush(stdout);
}

static void standin_row(long size, double value)
{
	fprintf(stdout, "%-*ld%*.*f\n", 10, size, FIELD_WIDTH, FLOAT_PRECISION, value);
	fflush(stdout);
}

/* standin_next is the size after s: OSU doubles, and 0 is followed by 1. */
static long standin_next(long s) { return s == 0 ? 1 : 2 * s; }

/* standin_main is the whole program, as OSU's loop goes: for each size,
 * warmup + iterations calls of step(rank, buf, size) between the two ranks,
 * timed from the first after the warmup, and rank 0 prints the row of
 * value(size, elapsed, iterations). o holds the program's defaults. */
static int standin_main(int argc, char **argv, struct standin_options o, const char *title, const char *column,
			void (*step)(int rank, char *buf, long size), double (*value)(long size, double elapsed, int iterations))
{
	int rank;
	standin_start(&argc, &argv, &o, &rank);
	char *buf = calloc(o.max_size > 0 ? o.max_size : 1, 1);
	standin_header(rank, title, column);
	for (long size = o.min_size; size <= o.max_size; size = standin_next(size)) {
		double start = 0;
		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < o.warmup + o.iterations; i++) {
			if (i == o.warmup)
				start = MPI_Wtime();
			step(rank, buf, size);
		}
		double elapsed = MPI_Wtime() - start;
		if (rank == 0)
			standin_row(size, value(size, elapsed, o.iterations));
	}
	free(buf);
	MPI_Finalize();
	return 0;
}

#endif
