/*
 * prog_flight.c - waves in flight (prog.h): what a wave's pre-copies and
 * sends read of the rank's previous wave, and the wave's ops put in that
 * order, so that the engine (exec.c) can post a wave while the one before
 * it is still in flight.
 *
 * A rank runs its waves in order.  With two in flight, when it begins
 * wave w its waves before the previous one (p) are complete, and p is
 * posted: its pre-copies done, its messages under way, its post-copies
 * not yet.  So an op of w that reads only its own bytes, or bytes that
 * arrived before p, or bytes p's pre-copies made (local transfers, sums),
 * is FREE: it may run at once.  One that reads bytes p received over
 * scale-up straight where they are read from is UP: it runs once p's
 * scale-up messages are done (a handover of balancing, much shorter than
 * the scale-out wave beside it).  Anything else of p (bytes it received
 * over scale-out, bytes its post-copies move out of staging) makes it ALL:
 * it runs once p is complete.  The walk (prog_wave.c) records with every
 * holding the wave and class of its arrival and, while it emits, the class
 * of each pre-copy and send; at the end of the wave's sends this file
 * lifts each send to the class of the sends to the same peer before it
 * (both ends must see a pair's messages in one order) and sorts the ops
 * by class, keeping their order within a class.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/prog_internal.h"

uint32_t fast_prog_read_cls(const struct builder *b, uint64_t wave, uint32_t cls)
{
	return wave != NO_WAVE && wave == b->prev_wave ? cls : FAST_FLIGHT_FREE;
}

/* Record b->cur_cls for op `at` of the wave (an offset from its first). */
static int note(uint8_t **arr, size_t *cap, size_t at, uint32_t cls)
{
	if (FAST_GROW(*arr, *cap, at + 1))
		return FAST_ENOMEM;
	(*arr)[at] = (uint8_t)cls;
	return 0;
}

int fast_prog_note_copy(struct builder *b, size_t at)
{
	return note(&b->ccls, &b->cap_ccls, at - b->prog->waves[b->prog->nwaves - 1].pre0, b->cur_cls);
}

int fast_prog_note_send(struct builder *b, size_t at)
{
	return note(&b->scls, &b->cap_scls, at - b->prog->waves[b->prog->nwaves - 1].send0,
		    b->cur_cls);
}

/* Sort the n elements of `size` bytes at base by their class cls[i],
 * keeping their order within a class; at[c]: where class c + 1 starts. */
static int by_class(void *base, size_t n, size_t size, const uint8_t *cls, uint32_t at[2])
{
	char *tmp = n ? malloc(n * size) : NULL, *p = base;
	size_t k = 0;

	if (n && !tmp)
		return FAST_ENOMEM;
	for (uint32_t c = 0; c <= FAST_FLIGHT_ALL; c++) {
		for (size_t i = 0; i < n; i++)
			if (cls[i] == c)
				memcpy(tmp + k++ * size, p + i * size, size);
		if (c < FAST_FLIGHT_ALL)
			at[c] = (uint32_t)k;
	}
	if (n)
		memcpy(base, tmp, n * size);
	free(tmp);
	return 0;
}

int fast_prog_order_wave(struct builder *b, struct fast_pwave *w)
{
	struct fast_prog *g = b->prog;
	size_t nsend = g->nsends - w->send0, ncopy = g->ncopies - w->pre0;

	/* a send is at least as late as the sends to its peer before it */
	for (size_t i = 0; i < nsend; i++) {
		uint8_t *pc = &b->peer_cls[g->sends[w->send0 + i].peer];
		if (*pc > b->scls[i])
			b->scls[i] = *pc;
		*pc = b->scls[i];
	}
	for (size_t i = 0; i < nsend; i++)
		b->peer_cls[g->sends[w->send0 + i].peer] = 0;
	if (by_class(g->sends + w->send0, nsend, sizeof *g->sends, b->scls, w->send_at) < 0 ||
	    by_class(g->copies + w->pre0, ncopy, sizeof *g->copies, b->ccls, w->pre_at) < 0)
		return FAST_ENOMEM;
	return 0;
}
