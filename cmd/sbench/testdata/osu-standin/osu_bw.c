/*
 * osu_bw STAND-IN, for sbench's tests only — NOT the OSU Micro-Benchmarks'
 * osu_bw (see osu_standin.h). Rank 0 posts windows of 64 non-blocking
 * sends of each size, rank 1 the receives and a 4-byte acknowledgement;
 * the bandwidth is the bytes sent over the time, in MB/s (10^6 bytes/s).
 */
#include "osu_standin.h"

#define WINDOW 64

static void window(int rank, char *buf, long size)
{
	MPI_Request req[WINDOW];
	char ack[4];
	for (int w = 0; w < WINDOW; w++) {
		if (rank == 0)
			MPI_Isend(buf, (int)size, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[w]);
		else
			MPI_Irecv(buf, (int)size, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[w]);
	}
	MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
	if (rank == 0)
		MPI_Recv(ack, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	else
		MPI_Send(ack, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
}

static double bandwidth(long size, double elapsed, int iterations)
{
	return (double)size * WINDOW * iterations / elapsed / 1e6;
}

int main(int argc, char **argv)
{
	struct standin_options o = {1, 4194304, 100, 10};
	return standin_main(argc, argv, o, "OSU MPI Bandwidth Test", "Bandwidth (MB/s)", window, bandwidth);
}
