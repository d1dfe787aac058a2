/*
 * alltoallv_prog.c - an ordinary MPI program that knows nothing of fast:
 * it calls MPI_Alltoallv with varying counts and checks what arrives.  The
 * MPI test stage runs it under LD_PRELOAD of libfast_interpose.so, so the
 * calls go through the FAST executor (and through PMPI_Alltoallv for what
 * the interposer passes on: a vector datatype, MPI_IN_PLACE, a
 * sub-communicator of another size).
 *
 * usage: alltoallv_prog [ROUNDS]     exit 0 when every element is right
 *        alltoallv_prog mismatch     rank 1 expects one element more from
 *                                    rank 0 than rank 0 sends: exit 0 when
 *                                    the call fails on every rank (no hang)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* Elements rank s sends to rank d in round k (some zero, one hot receiver). */
static int count(int k, int s, int d)
{
	unsigned x = (unsigned)(k * 7919 + s * 104729 + d * 1299709);
	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	if (k % 3 == 1 && d == 1)
		return 400 + (int)(x % 50);
	if (x % 5 == 0)
		return 0;
	return (int)(x % 97);
}

static int value(int k, int s, int d, int i)
{
	return k * 1000003 + s * 10007 + d * 101 + i;
}

/* One MPI_Alltoallv of ints (elem == 1) or of pairs through a vector type
 * with a hole (elem == 2: the interposer must pass it through). */
static long round_ints(int k, MPI_Comm comm, int vector, int in_place)
{
	int n, me, *sc, *sd, *rc, *rd, *sb, *rb, st = 0, rt = 0;
	long bad = 0;
	int stride = vector ? 2 : 1;
	MPI_Datatype t = MPI_INT;

	MPI_Comm_size(comm, &n);
	MPI_Comm_rank(comm, &me);
	sc = calloc((size_t)n, sizeof *sc);
	sd = calloc((size_t)n, sizeof *sd);
	rc = calloc((size_t)n, sizeof *rc);
	rd = calloc((size_t)n, sizeof *rd);
	for (int d = 0; d < n; d++) {
		sc[d] = in_place ? count(k, 0, 0) : count(k, me, d);
		rc[d] = in_place ? count(k, 0, 0) : count(k, d, me);
		sd[d] = st;
		rd[d] = rt;
		st += sc[d];
		rt += rc[d];
	}
	sb = calloc((size_t)st * stride + 1, sizeof *sb);
	rb = calloc((size_t)rt * stride + 1, sizeof *rb);
	for (int d = 0; d < n; d++)
		for (int i = 0; i < sc[d]; i++)
			sb[(sd[d] + i) * stride] = value(k, me, d, i);
	if (in_place)
		memcpy(rb, sb, (size_t)st * stride * sizeof *sb);
	else
		for (int i = 0; i < rt * stride; i++)
			rb[i] = -1;
	if (vector) {
		MPI_Datatype v;
		MPI_Type_vector(1, 1, 2, MPI_INT, &v);
		MPI_Type_create_resized(v, 0, 2 * sizeof(int), &t);
		MPI_Type_free(&v);
		MPI_Type_commit(&t);
	}
	if (MPI_Alltoallv(in_place ? MPI_IN_PLACE : sb, sc, sd, t, rb, rc, rd, t, comm) != MPI_SUCCESS)
		bad++;
	for (int s = 0; s < n; s++)
		for (int i = 0; i < rc[s]; i++)
			bad += rb[(rd[s] + i) * stride] != value(k, in_place ? me : s, in_place ? s : me, i) &&
			       !in_place;
	/* in place: element i of block s is what s sent to me: value(k, s, me, i)
	 * computed by s with its own sb layout (same counts everywhere) */
	if (in_place)
		for (int s = 0; s < n; s++)
			for (int i = 0; i < rc[s]; i++)
				bad += rb[(rd[s] + i) * stride] != value(k, s, me, i);
	if (vector)
		MPI_Type_free(&t);
	free(sc);
	free(sd);
	free(rc);
	free(rd);
	free(sb);
	free(rb);
	return bad;
}

/* Counts that disagree: rank 1's receive count from rank 0 is one too
 * many.  Returns the ranks on which MPI_Alltoallv failed. */
static int mismatch(void)
{
	int *sc = calloc((size_t)size, sizeof *sc), *sd = calloc((size_t)size, sizeof *sd);
	int *rc = calloc((size_t)size, sizeof *rc), *rd = calloc((size_t)size, sizeof *rd);
	int *sb = calloc((size_t)size * 4, sizeof *sb), *rb = calloc((size_t)size * 4, sizeof *rb);
	int failed, all = 0;

	for (int d = 0; d < size; d++) {
		sc[d] = rc[d] = 2;
		sd[d] = rd[d] = 4 * d;
	}
	if (rank == 1)
		rc[0] = 3;
	failed = MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS;
	MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	free(sc);
	free(sd);
	free(rc);
	free(rd);
	free(sb);
	free(rb);
	return all;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 6;
	long bad = 0, all = 0;
	int calls = 0;
	MPI_Comm half;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1 && strcmp(argv[1], "mismatch") == 0) {
		int failed = mismatch();
		if (rank == 0)
			printf("alltoallv_prog: counts that disagree: MPI_Alltoallv failed on %d of %d ranks: %s\n",
			       failed, size, failed == size ? "OK" : "FAILED");
		MPI_Finalize();
		return failed != size;
	}
	for (int k = 0; k < rounds; k++, calls++)
		bad += round_ints(k % 3, MPI_COMM_WORLD, 0, 0); /* matrices repeat: cache hits */
	bad += round_ints(7, MPI_COMM_WORLD, 1, 0);             /* vector type: passed through */
	bad += round_ints(8, MPI_COMM_WORLD, 0, 1);             /* MPI_IN_PLACE: passed through */
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	bad += round_ints(9, half, 0, 0);                       /* other size: passed through */
	MPI_Comm_free(&half);
	calls += 3;
	MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("alltoallv_prog: %d ranks, %d calls, %ld wrong elements: %s\n", size, calls, all,
		       all ? "FAILED" : "OK");
	MPI_Finalize();
	return all != 0;
}
