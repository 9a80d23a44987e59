/*
 * osu_latency STAND-IN, for sbench's tests only — NOT the OSU
 * Micro-Benchmarks' osu_latency (see osu_standin.h). Ranks 0 and 1
 * ping-pong each size; the latency is half the mean round trip, in µs.
 */
#include "osu_standin.h"

int main(int argc, char **argv)
{
	struct standin_options o = {1, 4194304, 1000, 100};
	int rank;
	standin_start(&argc, &argv, &o, &rank);
	char *buf = calloc(o.max_size > 0 ? o.max_size : 1, 1);
	standin_header(rank, "OSU MPI Latency Test", "Avg Latency(us)");
	for (long size = o.min_size; size <= o.max_size; size = standin_next(size)) {
		double start = 0;
		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < o.warmup + o.iterations; i++) {
			if (i == o.warmup)
				start = MPI_Wtime();
			if (rank == 0) {
				MPI_Send(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
				MPI_Recv(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
			}
		}
		double elapsed = MPI_Wtime() - start;
		if (rank == 0)
			standin_row(size, elapsed * 1e6 / (2.0 * o.iterations));
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
