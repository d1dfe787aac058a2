
/* tests/install/prog_exec.c - an MPI program against the installed
 * libfast_exec (tests/install/run.sh prepends an #include of every
 * installed header): fast_alltoallv_comm() on 4 ranks (h200 cut to 2 x 2)
 * with uneven counts; every received byte must be the sender's pattern. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	struct fast_limits lim;
	struct fast_topo topo;
	struct fast_err err;
	uint64_t sc[4], sd[4], rc[4], rd[4], st = 0, rt = 0;
	unsigned char *sb, *rb;
	int rank, size, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	fast_limits_default(&lim);
	if (size != 4 || fast_topo_preset("h200", 2, 2, &lim, &topo, &err) < 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int p = 0; p < 4; p++) {
		sc[p] = 1000u * (uint64_t)(1 + (rank + 2 * p) % 4); /* rank -> p */
		rc[p] = 1000u * (uint64_t)(1 + (p + 2 * rank) % 4); /* p -> rank */
		sd[p] = st;
		rd[p] = rt;
		st += sc[p];
		rt += rc[p];
	}
	sb = malloc(st);
	rb = malloc(rt);
	if (!sb || !rb)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int p = 0; p < 4; p++)
		for (uint64_t i = 0; i < sc[p]; i++)
			sb[sd[p] + i] = (unsigned char)(rank * 16 + p + i);
	if (fast_alltoallv_comm(sb, sc, sd, rb, rc, rd, MPI_COMM_WORLD, &topo, NULL, &err) < 0) {
		fprintf(stderr, "rank %d: %s\n", rank, err.msg);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int p = 0; p < 4; p++)
		for (uint64_t i = 0; i < rc[p]; i++)
			bad += rb[rd[p] + i] != (unsigned char)(p * 16 + rank + i);
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("fast_alltoallv_comm: 4 ranks, %d wrong bytes\n", bad);
	free(sb);
	free(rb);
	MPI_Finalize();
	return bad != 0;
}
