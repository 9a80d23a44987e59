/*
 * osu_latency STAND-IN, for sbench's tests only — NOT the OSU
 * Micro-Benchmarks' osu_latency (see osu_standin.h). Ranks 0 and 1
 * ping-pong each size; the latency is half the mean round trip, in µs.
 */
#include "osu_standin.h"

static void pingpong(int rank, char *buf, long size)
{
	if (rank == 0) {
		MPI_Send(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
		MPI_Recv(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
	}
}

static double latency(long size, double elapsed, int iterations)
{
	(void)size;
	return elapsed * 1e6 / (2.0 * iterations);
}

int main(int argc, char **argv)
{
	struct standin_options o = {1, 4194304, 1000, 100};
	return standin_main(argc, argv, o, "OSU MPI Latency Test", "Avg Latency(us)", pingpong, latency);
}
