/*
 * msccl_xml.c - the MSCCL program (msccl.h) as MSCCL's XML algorithm file:
 * one <gpu> per GPU with its buffer sizes in chunks, its thread blocks and
 * their steps, in the order msccl.c built them.  Attribute text is escaped;
 * a failed write is FAST_EIO.
 */
#include "lib/export/msccl.h"

#include <stdio.h>

static const char *buf_name(enum fast_msccl_buf b)
{
	return b == FAST_MSCCL_IN ? "i" : b == FAST_MSCCL_OUT ? "o" : "s";
}

static const char *op_name(enum fast_msccl_op op)
{
	switch (op) {
	case FAST_MSCCL_SEND: return "s";
	case FAST_MSCCL_RECV: return "r";
	case FAST_MSCCL_COPY: return "cpy";
	default: return "nop";
	}
}

static void put_attr(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s < 0x20)
				fputc(' ', f);
			else
				fputc(*s, f);
		}
	}
}

int fast_msccl_write(const struct fast_msccl *m, FILE *f, struct fast_err *err)
{
	double rel = m->total_bytes ? (double)m->rounded_bytes / (double)m->total_bytes : 0.0;
	uint32_t t = 0;

	fprintf(f, "<!-- fast export (MSCCL): chunk %llu B, %llu of %llu message bytes changed by rounding (%.6f) -->\n",
		(unsigned long long)m->chunk_bytes, (unsigned long long)m->rounded_bytes,
		(unsigned long long)m->total_bytes, rel);
	fputs("<algo name=\"", f);
	put_attr(f, m->name);
	fputs("\" proto=\"", f);
	put_attr(f, m->proto);
	fprintf(f, "\" nchannels=\"%u\" nchunksperloop=\"%u\" ngpus=\"%u\" coll=\"alltoall\" inplace=\"0\" outofplace=\"1\">\n",
		m->nchannels, m->nchunksperloop, m->ngpus);
	for (uint32_t g = 0; g < m->ngpus; g++) {
		fprintf(f, "  <gpu id=\"%u\" i_chunks=\"%llu\" o_chunks=\"%llu\" s_chunks=\"%llu\">\n", g,
			(unsigned long long)m->i_chunks[g], (unsigned long long)m->o_chunks[g],
			(unsigned long long)m->s_chunks[g]);
		for (; t < m->ntbs && m->tbs[t].gpu == g; t++) {
			const struct fast_msccl_tb *tb = &m->tbs[t];
			fprintf(f, "    <tb id=\"%u\" send=\"%d\" recv=\"%d\" chan=\"%d\">\n", tb->id,
				tb->send, tb->recv, tb->chan);
			for (uint32_t s = 0; s < tb->nsteps; s++) {
				const struct fast_msccl_step *st = &m->steps[tb->step0 + s];
				fprintf(f, "      <step s=\"%u\" type=\"%s\" srcbuf=\"%s\" srcoff=\"%lld\" dstbuf=\"%s\" dstoff=\"%lld\" cnt=\"%u\" depid=\"%d\" deps=\"%d\" hasdep=\"%u\"/>\n",
					s, op_name(st->op), buf_name(st->srcbuf), (long long)st->srcoff,
					buf_name(st->dstbuf), (long long)st->dstoff, st->cnt, st->depid,
					st->deps, st->hasdep);
			}
			fputs("    </tb>\n", f);
		}
		fputs("  </gpu>\n", f);
	}
	fputs("</algo>\n", f);
	if (ferror(f))
		return fast_err_set(err, FAST_EIO, "msccl export: write failed");
	return 0;
}
