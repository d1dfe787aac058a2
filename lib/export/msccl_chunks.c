/*
 * msccl_chunks.c - the chunks of an MSCCL export (msccl.h): each
 * message's size (from the matrix, or from what the plan delivers), the
 * chunk size (the largest that keeps every byte range exact and the
 * buffers within max_chunks), each message quantised to
 * max(1, round(L / C)) chunks with the bytes that rounding changes
 * counted, and the buffer layout, inputs in destination order, outputs in
 * source order, within EXPORT_MAX_CHUNKS per buffer.  msccl.c builds the
 * program on them.
 */
#include "lib/export/msccl.h"
#include "lib/export/msccl_internal.h"

#include <string.h>

/* Message sizes: D when given, else the bytes that reach their destination. */
int fast_msccl_message_sizes(const struct fast_plan *x, const uint64_t *D, uint32_t ng,
			     uint64_t *L, struct fast_err *err)
{
	for (size_t i = 0; i < x->nxfers; i++) {
		const struct fast_xfer *xf = &x->xfers[i];
		for (uint32_t k = 0; k < xf->npieces; k++) {
			const struct fast_piece *pc = &x->pieces[xf->piece0 + k];
			uint64_t end;
			if (pc->src >= ng || pc->dst >= ng || xf->from >= ng || xf->to >= ng)
				return fast_err_set(err, FAST_EINPUT, "msccl export: GPU out of range in transfer %zu", i);
			if (!fast_add_u64(pc->off, pc->len, &end))
				return fast_err_set(err, FAST_EINPUT, "msccl export: piece offset overflows");
			if (D) {
				if (end > D[(uint64_t)pc->src * ng + pc->dst])
					return fast_err_set(err, FAST_EINPUT,
							    "msccl export: a piece of message %u->%u ends at byte %llu, beyond its %llu bytes in the matrix",
							    pc->src, pc->dst, (unsigned long long)end,
							    (unsigned long long)D[(uint64_t)pc->src * ng + pc->dst]);
			} else if (xf->to == pc->dst && end > L[(uint64_t)pc->src * ng + pc->dst]) {
				L[(uint64_t)pc->src * ng + pc->dst] = end;
			}
		}
	}
	if (D)
		memcpy(L, D, (size_t)ng * ng * sizeof *L);
	return 0;
}

uint64_t fast_msccl_auto_chunk(const struct fast_plan *x, const uint64_t *L, uint32_t ng,
			       uint32_t max_chunks)
{
	uint64_t g = 0, maxbuf = 0;

	for (uint32_t s = 0; s < ng; s++) {
		uint64_t row = 0, col = 0;
		for (uint32_t d = 0; d < ng; d++) {
			g = fast_gcd_u64(g, L[(uint64_t)s * ng + d]);
			row += L[(uint64_t)s * ng + d];
			col += L[(uint64_t)d * ng + s];
		}
		if (row > maxbuf)
			maxbuf = row;
		if (col > maxbuf)
			maxbuf = col;
	}
	for (size_t i = 0; i < x->npieces; i++)
		g = fast_gcd_u64(fast_gcd_u64(g, x->pieces[i].off), x->pieces[i].len);
	if (g == 0)
		return 1;
	if (maxbuf / g <= max_chunks)
		return g;
	/* the smallest multiple of g that keeps buffers within max_chunks:
	 * sizes that are multiples of g stay exact in more places */
	{
		uint64_t c = maxbuf / max_chunks + (maxbuf % max_chunks != 0);
		return (c / g + (c % g != 0)) * g;
	}
}

int fast_msccl_quantise(const struct fast_plan *x, const uint64_t *L, uint32_t ng, uint64_t C,
			struct fast_msccl *m, struct fast_err *err)
{
	uint64_t nn = (uint64_t)ng * ng;

	m->chunk_bytes = C;
	for (uint64_t i = 0; i < nn; i++) {
		uint64_t l = L[i], qq, r, qc;
		if (l == 0)
			continue;
		qq = l / C;
		r = l % C;
		if (r >= C - r)
			qq++;
		if (qq == 0)
			qq = 1;
		m->q[i] = qq;
		m->total_bytes += l;
		if (!fast_mul_u64(qq, C, &qc))
			return fast_err_set(err, FAST_ELIMIT, "msccl export: chunk count overflows");
		m->rounded_bytes += qc > l ? qc - l : l - qc;
	}
	for (size_t i = 0; i < x->npieces; i++) {
		const struct fast_piece *pc = &x->pieces[i];
		uint64_t msg = (uint64_t)pc->src * ng + pc->dst;
		uint64_t ends[2] = { pc->off, pc->off + pc->len };
		for (int e = 0; e < 2; e++) {
			unsigned __int128 v = (unsigned __int128)ends[e] * m->q[msg];
			if (L[msg] && ends[e] < L[msg] && v % L[msg] != 0)
				m->boundary_moves++;
		}
		if (fast_msccl_boundary(pc->off, L[msg], m->q[msg]) >=
		    fast_msccl_boundary(pc->off + pc->len, L[msg], m->q[msg]))
			m->dropped_pieces++;
	}
	return 0;
}

int fast_msccl_layout(uint32_t ng, uint64_t C, struct fast_msccl *m, uint64_t *in_off,
		      uint64_t *out_off, struct fast_err *err)
{
	for (uint32_t s = 0; s < ng; s++) {
		for (uint32_t d = 0; d < ng; d++) {
			uint64_t i = (uint64_t)s * ng + d, j = (uint64_t)d * ng + s;
			in_off[i] = m->i_chunks[s];
			m->i_chunks[s] += m->q[i];
			out_off[j] = m->o_chunks[s];
			m->o_chunks[s] += m->q[j];
		}
	}
	for (uint32_t g = 0; g < ng; g++) {
		uint64_t mx = m->i_chunks[g] > m->o_chunks[g] ? m->i_chunks[g] : m->o_chunks[g];
		if (mx > EXPORT_MAX_CHUNKS)
			return fast_err_set(err, FAST_ELIMIT,
					    "msccl export: GPU %u needs %llu chunks of %llu bytes, over the "
					    "limit of %u in a buffer; give a larger chunk size",
					    g, (unsigned long long)mx, (unsigned long long)C,
					    EXPORT_MAX_CHUNKS);
	}
	return 0;
}
