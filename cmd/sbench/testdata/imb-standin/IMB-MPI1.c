/*
 * IMB-MPI1 STAND-IN, for sbench's tests only — NOT the Intel(R) MPI
 * Benchmarks.
 *
 * Debian packages no IMB, so the tests compile these lines with the
 * machine's real Open MPI (mpicc) and put them on PATH as IMB-MPI1. They
 * run two of IMB-MPI1's benchmarks over MPI as IMB times them — PingPong
 * (ranks 0 and 1 send and receive in turn; t is half the round trip,
 * Mbytes/sec the size over t, 10^6 bytes/s) and Allreduce (MPI_FLOAT
 * sums; t_min, t_max and t_avg of one call over the ranks) — for IMB's
 * message sizes (0, then powers of two to 4 MiB; Allreduce from 4, a
 * float) and repetitions (1000, fewer from 64 KiB: 40 MiB per size),
 * after IMB's warm-up (2 untimed repetitions of the first size), and
 * print them in IMB-MPI1 2021's output format byte for byte in layout
 * (the header, "# Benchmarking X", "# #processes = 2", IMB's 13-column
 * tables and rule lines), so that sbench's imb parser, compare and report
 * meet the real format. Their numbers say nothing of IMB's.
 *
 * Usage, as IMB-MPI1's: IMB-MPI1 [BENCHMARK …], benchmarks named in any
 * case; PingPong and Allreduce only (both when none is named), on exactly
 * two processes. IMB's options are not implemented and are refused.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/utsname.h>

#define OW 13                   /* IMB's column width (ow_format) */
#define MAX_MSG_LOG 22          /* 4 MiB */
#define MSGS_PER_SAMPLE 1000
#define OVERALL_VOL (40 << 20)  /* bytes per size, which cuts repetitions */
#define N_WARMUP 2

enum { PINGPONG, ALLREDUCE, NBENCH };
static const char *names[NBENCH] = {"PingPong", "Allreduce"};

static int repetitions(long size)
{
	if (size == 0 || OVERALL_VOL / size >= MSGS_PER_SAMPLE)
		return MSGS_PER_SAMPLE;
	return (int)(OVERALL_VOL / size) > 0 ? (int)(OVERALL_VOL / size) : 1;
}

/* rule prints IMB_make_line: '#' and (columns * 13 - 1) dashes. */
static void rule(int columns)
{
	putchar('#');
	for (int i = 1; i < columns * OW; i++)
		putchar('-');
	putchar('\n');
}

static void header(int argc, char **argv, const int *run)
{
	struct utsname u;
	time_t now = time(NULL);
	int version, subversion;
	uname(&u);
	MPI_Get_version(&version, &subversion);
	printf("#----------------------------------------------------------------\n");
	printf("#    Intel(R) MPI Benchmarks 2021.3, MPI-1 part\n");
	printf("#----------------------------------------------------------------\n");
	printf("# Date                  : %s", asctime(localtime(&now)));
	printf("# Machine               : %s\n", u.machine);
	printf("# System                : %s\n", u.sysname);
	printf("# Release               : %s\n", u.release);
	printf("# Version               : %s\n", u.version);
	printf("# MPI Version           : %d.%d\n", version, subversion);
	printf("# MPI Thread Environment: \n\n\n");
	printf("# Calling sequence was: \n\n#");
	for (int i = 0; i < argc; i++)
		printf(" %s", argv[i]);
	printf(" \n\n");
	printf("# Minimum message length in bytes:   %d\n", 0);
	printf("# Maximum message length in bytes:   %d\n", 1 << MAX_MSG_LOG);
	printf("#\n");
	printf("# MPI_Datatype                   :   MPI_BYTE \n");
	printf("# MPI_Datatype for reductions    :   MPI_FLOAT \n");
	printf("# MPI_Op                         :   MPI_SUM  \n");
	printf("# \n# \n\n");
	printf("# List of Benchmarks to run:\n\n");
	for (int b = 0; b < NBENCH; b++)
		if (run[b])
			printf("# %s\n", names[b]);
}

static void table_header(int b, int nprocs)
{
	static const char *cols[NBENCH][5] = {
		{"#bytes", "#repetitions", "t[usec]", "Mbytes/sec", NULL},
		{"#bytes", "#repetitions", "t_min[usec]", "t_max[usec]", "t_avg[usec]"},
	};
	int n = b == PINGPONG ? 4 : 5;
	printf("\n");
	rule(n);
	printf("# Benchmarking %s \n", names[b]);
	printf("# #processes = %d \n", nprocs);
	rule(n);
	for (int i = 0; i < n; i++)
		printf("%*s", OW, cols[b][i]);
	printf("\n");
	fflush(stdout);
}

/* pingpong returns this rank's time of one half round trip, in µs. */
static double pingpong(int rank, char *buf, long size, int reps)
{
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < reps; i++) {
		if (rank == 0) {
			MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) * 1e6 / (2.0 * reps);
}

/* allreduce returns this rank's time of one call, in µs. */
static double allreduce(float *in, float *out, long size, int reps)
{
	int count = (int)(size / sizeof(float));
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < reps; i++)
		MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	return (MPI_Wtime() - t0) * 1e6 / reps;
}

int main(int argc, char **argv)
{
	int rank, nprocs, run[NBENCH] = {0}, any = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	for (int i = 1; i < argc; i++) {
		int found = 0;
		for (int b = 0; b < NBENCH; b++) {
			if (strcasecmp(argv[i], names[b]) == 0) {
				run[b] = found = any = 1;
			}
		}
		if (!found) {
			if (rank == 0)
				fprintf(stderr, "IMB-MPI1 stand-in: %s: only PingPong and Allreduce are implemented, without options\n", argv[i]);
			MPI_Finalize();
			return EXIT_FAILURE;
		}
	}
	if (!any)
		run[PINGPONG] = run[ALLREDUCE] = 1;
	if (nprocs != 2) {
		if (rank == 0)
			fprintf(stderr, "IMB-MPI1 stand-in: runs on exactly 2 processes, not %d\n", nprocs);
		MPI_Finalize();
		return EXIT_FAILURE;
	}
	long max = 1L << MAX_MSG_LOG;
	char *buf = calloc(max, 1);
	float *in = calloc(max / sizeof(float), sizeof(float)), *out = calloc(max / sizeof(float), sizeof(float));
	if (!buf || !in || !out) {
		fprintf(stderr, "IMB-MPI1 stand-in: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
	}
	if (rank == 0)
		header(argc, argv, run);
	if (run[PINGPONG]) {
		if (rank == 0)
			table_header(PINGPONG, nprocs);
		pingpong(rank, buf, 0, N_WARMUP);
		for (long size = 0; size <= max; size = size ? 2 * size : 1) {
			int reps = repetitions(size);
			double t = pingpong(rank, buf, size, reps), tmax;
			MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
			if (rank == 0) {
				printf("%*ld%*d%*.2f%*.2f\n", OW, size, OW, reps, OW, tmax, OW, tmax > 0 ? size / tmax : 0.0);
				fflush(stdout);
			}
		}
	}
	if (run[ALLREDUCE]) {
		if (rank == 0)
			table_header(ALLREDUCE, nprocs);
		allreduce(in, out, 0, N_WARMUP);
		for (long size = 0; size <= max; size = size ? 2 * size : (long)sizeof(float)) {
			int reps = repetitions(size);
			double t = allreduce(in, out, size, reps), tmin, tmax, tsum;
			MPI_Reduce(&t, &tmin, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
			MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
			MPI_Reduce(&t, &tsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
			if (rank == 0) {
				printf("%*ld%*d%*.2f%*.2f%*.2f\n", OW, size, OW, reps, OW, tmin, OW, tmax, OW, tsum / nprocs);
				fflush(stdout);
			}
		}
	}
	if (rank == 0) {
		printf("\n\n# All processes entering MPI_Finalize\n\n");
		fflush(stdout);
	}
	free(buf);
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
