/*
 * test_moe.c - MoE layouts and real-data import: expert and token
 * placement (with replicas), per-token counting with and without per-GPU
 * deduplication, the proportional method for counts, the parsers' errors
 * ("file:line: ..."), and whole imports of the miniature data set in
 * tests/data/moe whose every count is known by hand; token groups
 * (--tokens) on the fixture and, against the byte import, on the real
 * DeepSeek-V2-Lite routing in data/moe (EP16/32/64).
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "lib/workload/moe.h"
#include "lib/workload/moe_place.h"

#define FIXTURE "tests/data/moe"

static struct fast_moe_layout layout(uint32_t ng, uint32_t E, enum fast_placement ex,
				     enum fast_placement tok)
{
	struct fast_moe_layout l = { .ng = ng, .experts = E, .experts_at = ex, .tokens_at = tok };
	return l;
}

static void test_moe__expert_placement(void)
{
	struct fast_moe_layout l = layout(4, 16, FAST_PLACE_CONTIGUOUS, FAST_PLACE_CONTIGUOUS);
	struct fast_err err;

	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 0, 0), 0);
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 3, 2), 0);
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 4, 2), 1);
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 15, 0), 3);
	l.experts_at = FAST_PLACE_ROUND_ROBIN;
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 5, 0), 1);
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 15, 0), 3);
	/* uneven blocks: 10 experts on 4 GPUs, every GPU gets 2 or 3 */
	l = layout(4, 10, FAST_PLACE_CONTIGUOUS, FAST_PLACE_CONTIGUOUS);
	uint32_t per[4] = { 0 };
	for (uint32_t e = 0; e < 10; e++)
		per[fast_moe_expert_gpu(&l, e, 0)]++;
	for (int g = 0; g < 4; g++)
		CU_ASSERT(per[g] == 2 || per[g] == 3);
	/* replicas: 4 experts on 8 GPUs */
	l = layout(8, 4, FAST_PLACE_CONTIGUOUS, FAST_PLACE_CONTIGUOUS);
	CU_ASSERT_EQUAL(fast_moe_layout_check(&l, &err), 0);
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 1, 0), 2);
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 1, 5), 3);
	l.experts_at = FAST_PLACE_ROUND_ROBIN;
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 1, 0), 1);
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 1, 3), 5);
	l = layout(8, 3, FAST_PLACE_CONTIGUOUS, FAST_PLACE_CONTIGUOUS);
	CU_ASSERT_EQUAL(fast_moe_layout_check(&l, &err), FAST_EINPUT);
	enum fast_placement p;
	CU_ASSERT_EQUAL(fast_placement_parse("round-robin", &p, &err), 0);
	CU_ASSERT_EQUAL(p, FAST_PLACE_ROUND_ROBIN);
	CU_ASSERT_EQUAL(fast_placement_parse("striped", &p, &err), FAST_EUSAGE);
}

static void test_moe__token_sources(void)
{
	struct fast_moe_layout l = layout(2, 64, FAST_PLACE_CONTIGUOUS, FAST_PLACE_CONTIGUOUS);
	static const uint32_t want_c[5] = { 0, 0, 0, 1, 1 };
	for (uint64_t t = 0; t < 5; t++)
		CU_ASSERT_EQUAL(fast_moe_token_src(&l, t, 5), want_c[t]);
	l.tokens_at = FAST_PLACE_ROUND_ROBIN;
	for (uint64_t t = 0; t < 5; t++)
		CU_ASSERT_EQUAL(fast_moe_token_src(&l, t, 5), t % 2);
}

/* Tokens of the fixture's layer 1 (tests/data/moe/README.md). */
static const uint16_t layer1[5 * 6] = {
	0, 1, 2, 3, 4, 5,        /* all on GPU 0 at EP2 */
	0, 1, 2, 32, 33, 34,     /* GPUs 0 and 1 */
	40, 41, 42, 43, 44, 45,  /* GPU 1 */
	10, 11, 12, 13, 14, 15,  /* GPU 0 */
	10, 50, 51, 52, 53, 54,  /* GPUs 0 and 1 */
};

static void test_moe__token_counted_once_per_gpu(void)
{
	struct fast_moe_layout l = layout(2, 64, FAST_PLACE_CONTIGUOUS, FAST_PLACE_CONTIGUOUS);
	struct fast_moe_tokens t = { 5, 6, 2, (uint16_t *)layer1, NULL };
	struct fast_err err;
	uint64_t c[4] = { 0 };

	CU_ASSERT_EQUAL(fast_moe_count_tokens(&l, &t, true, c, &err), 0);
	CU_ASSERT(c[0] == 2 && c[1] == 2 && c[2] == 2 && c[3] == 1);
	memset(c, 0, sizeof c);
	CU_ASSERT_EQUAL(fast_moe_count_tokens(&l, &t, false, c, &err), 0);
	CU_ASSERT(c[0] == 9 && c[1] == 9 && c[2] == 7 && c[3] == 5);
	/* round-robin experts: 0..5 land on both GPUs */
	l.experts_at = FAST_PLACE_ROUND_ROBIN;
	memset(c, 0, sizeof c);
	CU_ASSERT_EQUAL(fast_moe_count_tokens(&l, &t, true, c, &err), 0);
	CU_ASSERT(c[0] + c[1] == 6 && c[2] + c[3] == 4);
	uint16_t bad[6] = { 0, 1, 2, 3, 4, 70 };
	struct fast_moe_tokens tb = { 1, 6, 1, bad, NULL };
	CU_ASSERT_EQUAL(fast_moe_count_tokens(&l, &tb, true, c, &err), FAST_EINPUT);
}

/* The pairs a GPU computes are the columns of the no-dedup count matrix,
 * for every placement, replicas included (E = 4 experts on 8 GPUs). */
static void test_moe__pairs_are_no_dedup_columns(void)
{
	uint16_t ids[40];
	struct fast_moe_tokens t = { 20, 2, 1, ids, NULL };
	struct fast_err err;

	for (uint32_t i = 0; i < 20; i++) { /* two distinct experts of 0..3 */
		ids[2 * i] = (uint16_t)(i * 7 % 4);
		ids[2 * i + 1] = (uint16_t)((i * 7 + 1 + i % 3) % 4);
	}
	for (int ex = 0; ex < 2; ex++)
		for (int tok = 0; tok < 2; tok++) {
			struct fast_moe_layout l = layout(8, 4, (enum fast_placement)ex,
							  (enum fast_placement)tok);
			uint64_t c[64] = { 0 }, p[8] = { 0 }, col[8] = { 0 }, sum = 0;

			CU_ASSERT_EQUAL(fast_moe_count_tokens(&l, &t, false, c, &err), 0);
			CU_ASSERT_EQUAL(fast_moe_tokens_pairs(&l, &t, p, &err), 0);
			for (uint32_t k = 0; k < 64; k++)
				col[k % 8] += c[k];
			for (uint32_t g = 0; g < 8; g++)
				sum += p[g];
			CU_ASSERT(memcmp(p, col, sizeof p) == 0);
			CU_ASSERT_EQUAL(sum, 40);
		}
	ids[3] = 9;
	uint64_t p[8] = { 0 };
	struct fast_moe_layout l = layout(8, 4, FAST_PLACE_CONTIGUOUS, FAST_PLACE_CONTIGUOUS);
	CU_ASSERT_EQUAL(fast_moe_tokens_pairs(&l, &t, p, &err), FAST_EINPUT);
}

/* EPLB's hierarchical policy by hand: 8 experts on 2 servers x 2 GPUs, 4
 * redundant.  Servers: e0 (100) to server 0, e7 (50) to 1, then e1..e3
 * (1 each) to the lighter server 1 until full, e4..e6 to 0.  Server 0's
 * two extra replicas both go to e0 (100, then 50 per replica), server 1's
 * to e7; then three slots per GPU, heaviest first to the lighter GPU (a
 * GPU's slots in expert order). */
static void test_moe__eplb_by_hand(void)
{
	const uint64_t load[8] = { 100, 1, 1, 1, 1, 1, 1, 50 };
	const uint32_t want[12] = { 0, 0, 6, 0, 4, 5, 3, 7, 7, 1, 2, 7 };
	uint32_t out[12], off[9], gpu[12];
	struct fast_err err;

	CU_ASSERT_EQUAL(fast_moe_place_eplb(load, 8, 4, 4, 2, out, &err), 0);
	CU_ASSERT(memcmp(out, want, sizeof want) == 0);
	fast_moe_place_replicas(out, 12, 8, 4, off, gpu);
	CU_ASSERT(off[0] == 0 && off[1] == 3 && off[8] == 12);
	CU_ASSERT(gpu[0] == 0 && gpu[1] == 0 && gpu[2] == 1); /* e0: slots 0, 1, 3 */
	/* a token of GPU 1 uses its own replica; of GPU 3, spread over e0's */
	struct fast_moe_layout l = { .ng = 4, .experts = 8, .rep_off = off, .rep_gpu = gpu,
				     .gpus_per_server = 2 };
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 0, 1), 1);
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 0, 3), gpu[3 % 3]);
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 7, 0), 2 + 0); /* e7 on GPUs 2, 2, 3 */
	l.spread = true;
	CU_ASSERT_EQUAL(fast_moe_expert_gpu(&l, 0, 2), 1); /* the (2 mod 3)-th: GPU 1 */
	/* 8 + 3 slots do not divide over 4 GPUs */
	CU_ASSERT_EQUAL(fast_moe_place_eplb(load, 8, 3, 4, 2, out, &err), FAST_EUSAGE);
}

/* EPLB's global policy by hand: 4 experts on 3 servers of one GPU do not
 * divide (EPLB: groups % nodes != 0), so the 2 extra replicas go over all
 * experts and the 6 slots are packed onto all GPUs, servers ignored.
 * Replicas: e0 (10, then 5 per replica), e1 (6 > 5: then 3 each).  Items
 * e0 5, e0 5, e1 3, e1 3, e2 3, e3 1, heaviest first to the lightest GPU
 * with room: GPU 0 {e0, e2}, GPU 1 {e0, e3}, GPU 2 {e1, e1}. */
static void test_moe__eplb_global_by_hand(void)
{
	const uint64_t load[4] = { 10, 6, 3, 1 };
	const uint32_t want[6] = { 0, 2, 0, 3, 1, 1 };
	uint32_t out[6], one[6];
	struct fast_err err;

	CU_ASSERT(!fast_moe_place_eplb_hierarchical(4, 3, 1));
	CU_ASSERT(fast_moe_place_eplb_hierarchical(4, 4, 2));
	CU_ASSERT_EQUAL(fast_moe_place_eplb(load, 4, 2, 3, 1, out, &err), 0);
	CU_ASSERT(memcmp(out, want, sizeof want) == 0);
	/* the same map as one server of the three GPUs */
	CU_ASSERT_EQUAL(fast_moe_place_eplb(load, 4, 2, 3, 3, one, &err), 0);
	CU_ASSERT(memcmp(one, want, sizeof want) == 0);
	/* 4 + 1 slots do not divide over 3 GPUs; the message names R = 2 */
	CU_ASSERT_EQUAL(fast_moe_place_eplb(load, 4, 1, 3, 1, out, &err), FAST_EUSAGE);
	CU_ASSERT(strstr(err.msg, "the next R that does: 2") != NULL);
}

static void test_moe__groups_split_by_token_share(void)
{
	/* one group of 10 tokens, 4 experts, EP4 contiguous tokens:
	 * sources hold 3, 2, 3, 2 tokens (floor(t*4/10)) */
	struct fast_moe_layout l = layout(4, 4, FAST_PLACE_CONTIGUOUS, FAST_PLACE_CONTIGUOUS);
	uint64_t tokens[1] = { 10 }, counts[4] = { 10, 5, 0, 5 }, c[16] = { 0 };
	struct fast_moe_groups g = { 1, 4, tokens, counts };
	struct fast_err err;

	CU_ASSERT_EQUAL(fast_moe_count_groups(&l, &g, c, &err), 0);
	/* expert 0 (GPU 0): 10 selections split 3,2,3,2 */
	CU_ASSERT(c[0 * 4 + 0] == 3 && c[1 * 4 + 0] == 2 && c[2 * 4 + 0] == 3 &&
		  c[3 * 4 + 0] == 2);
	uint64_t sum = 0, col1 = 0;
	for (int i = 0; i < 16; i++)
		sum += c[i];
	for (int s = 0; s < 4; s++)
		col1 += c[s * 4 + 1];
	CU_ASSERT_EQUAL(sum, 20);
	CU_ASSERT_EQUAL(col1, 5);
	for (int s = 0; s < 4; s++)
		CU_ASSERT_EQUAL(c[s * 4 + 2], 0);
	/* two groups: the second's tokens all sit on the last sources */
	uint64_t tk2[2] = { 4, 4 }, cn2[8] = { 4, 0, 0, 0, 0, 0, 0, 4 }, c2[16] = { 0 };
	struct fast_moe_groups g2 = { 2, 4, tk2, cn2 };
	l = layout(2, 4, FAST_PLACE_CONTIGUOUS, FAST_PLACE_CONTIGUOUS);
	CU_ASSERT_EQUAL(fast_moe_count_groups(&l, &g2, c2, &err), 0);
	CU_ASSERT(c2[0] == 4 && c2[1] == 0 && c2[2] == 0 && c2[3] == 4);
	uint64_t tk3[1] = { 0 }, cn3[4] = { 1, 0, 0, 0 };
	struct fast_moe_groups g3 = { 1, 4, tk3, cn3 };
	CU_ASSERT_EQUAL(fast_moe_count_groups(&l, &g3, c2, &err), FAST_EINPUT);
}

static void test_moe__raw_parser_errors_name_the_line(void)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "0\t1\t\t0.5\t0.5\n0\t1\t2\t\t0.1\t0.1\t0.1\n",
		  "raw.txt:2: 3 expert ids is not a multiple of top-2" },
		{ "0\t1\t\t0.5\n", "raw.txt:1: 2 expert ids but 1 gate weights" },
		{ "0\t9\t\t0.5\t0.5\n", "raw.txt:1: expert id 2: '9' is not an expert (0..7)" },
		{ "0\tx\t\t0.5\t0.5\n", "raw.txt:1: expert id 2: 'x' is not an expert (0..7)" },
		{ "3\t3\t\t0.5\t0.5\n", "raw.txt:1: token 1 chooses expert 3 twice" },
		{ "0\t1\t\t0.5\tabc\n", "raw.txt:1: gate weight 2: 'abc' is not a number" },
		{ "0\t1\t0.5\t0.5\n", "raw.txt:1: expected expert ids, two tabs, then gate weights" },
		{ "0\t1\t\t0.5\t0.5\n\n0\t1\t\t0.5\t0.5\n", "raw.txt:2: empty line" },
		{ "", "raw.txt: no tokens" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fast_moe_tokens t = { 0 };
		struct fast_err err = { 0 };
		CU_ASSERT_EQUAL(fast_moe_parse_deepseek_raw(cases[i].text, strlen(cases[i].text),
							    "raw.txt", 8, 2, &t, &err),
				FAST_EINPUT);
		CU_ASSERT_STRING_EQUAL(err.msg, cases[i].msg);
		CU_ASSERT_PTR_NULL(t.ids);
	}
	const char *ok = "0\t1\t2\t3\t\t1e-3\t0.5\t.25\t1\r\n4\t5\t\t0.5\t0.5";
	struct fast_moe_tokens t;
	struct fast_err err;
	CU_ASSERT_EQUAL_FATAL(fast_moe_parse_deepseek_raw(ok, strlen(ok), "raw.txt", 8, 2, &t, &err),
			      0);
	CU_ASSERT_EQUAL(t.ntokens, 3);
	CU_ASSERT_EQUAL(t.nseq, 2);
	CU_ASSERT_EQUAL(t.ids[5], 5);
	fast_moe_tokens_free(&t);
}

static void test_moe__csv_parser_errors_name_the_line(void)
{
	static const char *hdr = "model,selection,domain,layer,expert,count\n";
	static const struct {
		const char *rows, *msg;
	} cases[] = {
		{ "m,topk,d,0,0,2\nm,topk,d,0,1,x\n", "c.csv:3: count: 'x' is not a count" },
		{ "m,topk,d,0,0,2\nm,topk,d,0,0,2\n", "c.csv:3: expert 0 of layer 0 listed twice" },
		{ "m,topk,d,0,0,2\n", "c.csv: layer 0 of m/topk/d: expert 1 missing (1 of 2 listed)" },
		{ "m,topk,d,0,0,2\nm,topk,d,0,1,1\n",
		  "c.csv: layer 0 of m/topk/d: 3 selections is not a multiple of top-2" },
		{ "m,topk,d,0,0,2,9\n", "c.csv:2: 7 fields, expected 6" },
		{ "m,topk,d,0,5,2\n", "c.csv:2: expert 5 out of range (2 experts)" },
		{ "\"m\",topk,d,0,0,2\n", "c.csv:2: quoted fields are not supported" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[512];
		struct fast_moe_groups g = { 0 };
		struct fast_err err = { 0 };
		snprintf(text, sizeof text, "%s%s", hdr, cases[i].rows);
		CU_ASSERT_EQUAL(fast_moe_parse_counts_csv(text, strlen(text), "c.csv", "m", "topk", "d",
							  0, 2, 2, &g, &err),
				FAST_EINPUT);
		CU_ASSERT_STRING_EQUAL(err.msg, cases[i].msg);
	}
	struct fast_moe_groups g;
	struct fast_err err;
	const char *bad_hdr = "model,selection,domain,layer,expert,n\n";
	CU_ASSERT_EQUAL(fast_moe_parse_counts_csv(bad_hdr, strlen(bad_hdr), "c.csv", "m", "topk",
						  "d", 0, 2, 2, &g, &err),
			FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "c.csv:1: column 6 is 'n', expected 'count'");
	/* a stray CR, a header with no rows, a BOM and CRCRLF line ends */
	const char *cr_hdr = "model,selection,domain,layer,expert,count\r\r\r\n";
	CU_ASSERT_EQUAL(fast_moe_parse_counts_csv(cr_hdr, strlen(cr_hdr), "c.csv", "m", "topk",
						  "d", 0, 2, 2, &g, &err),
			FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "c.csv: has a header but no rows");
	const char *tab_hdr = "model,selection,domain,layer,expert,count\t\nm,topk,d,0,0,3\n";
	CU_ASSERT_EQUAL(fast_moe_parse_counts_csv(tab_hdr, strlen(tab_hdr), "c.csv", "m", "topk",
						  "d", 0, 2, 2, &g, &err),
			FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "c.csv:1: column 6 is 'count\\x09', expected 'count'");
	const char *bom = "\xef\xbb\xbfmodel,selection,domain,layer,expert,count\r\r\n"
			  "m,topk,d,0,0,3\r\r\nm,topk,d,0,1,1\r\n";
	int bom_rc = fast_moe_parse_counts_csv(bom, strlen(bom), "c.csv", "m", "topk", "d", 0, 2,
					       2, &g, &err);
	CU_ASSERT_EQUAL(bom_rc, 0);
	if (bom_rc == 0) {
		CU_ASSERT_EQUAL(g.counts[0], 3);
		CU_ASSERT_EQUAL(g.counts[1], 1);
		fast_moe_groups_free(&g);
	}
	const char *ok = "model,selection,domain,layer,expert,count\r\nm,topk,d,0,0,3\r\n"
			 "m,top1,d,0,0,9\r\nm,topk,d,0,1,1\r\n";
	CU_ASSERT_EQUAL_FATAL(fast_moe_parse_counts_csv(ok, strlen(ok), "c.csv", "m", "topk", "d", 0,
							2, 2, &g, &err),
			      0);
	CU_ASSERT_EQUAL(g.ngroups, 1);
	CU_ASSERT_EQUAL(g.tokens[0], 2);
	CU_ASSERT_EQUAL(g.counts[0], 3);
	fast_moe_groups_free(&g);
	CU_ASSERT_EQUAL(fast_moe_parse_counts_csv(ok, strlen(ok), "c.csv", "m", "topk", "e", 0, 2,
						  2, &g, &err),
			FAST_EUSAGE);
	/* the per-sequence file: counts must add up to top-k x tokens */
	const char *seq = "task,moe_layer,seq,ntokens,e0,e1\nt,1,0,1,1,1\nt,1,1,2,2,1\n";
	CU_ASSERT_EQUAL(fast_moe_parse_seq_csv(seq, strlen(seq), "s.csv", "t", 1, 2, 2, &g, &err),
			FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "s.csv:3: expert counts sum to 3, expected top-2 x 2 tokens = 4");
	const char *seq2 = "task,moe_layer,seq,ntokens,e0,e1\nt,1,1,1,1,1\n";
	CU_ASSERT_EQUAL(fast_moe_parse_seq_csv(seq2, strlen(seq2), "s.csv", "t", 1, 2, 2, &g, &err),
			FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "s.csv:2: seq: '1', expected 0 (sequences in order)");
}

static struct fast_moe_import imp(const char *source, uint32_t ng)
{
	struct fast_moe_import o;
	memset(&o, 0, sizeof o);
	o.source = source;
	o.data_dir = FIXTURE;
	o.ng = ng;
	o.gpus_per_server = 2;
	return o;
}

static void test_moe__import_deepseek_per_token(void)
{
	struct fast_moe_import o = imp("deepseek-v2-lite", 2);
	struct fast_traffic t;
	struct fast_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(fast_moe_import(&o, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL_FATAL(t.count, 4);
	CU_ASSERT_STRING_EQUAL(t.m[0].label, "layer1/dispatch");
	CU_ASSERT_STRING_EQUAL(t.m[1].label, "layer1/combine");
	CU_ASSERT_STRING_EQUAL(t.m[3].label, "layer2/combine");
	/* layer 1 at EP2: [[2,2],[2,1]] tokens of 4096 bytes */
	CU_ASSERT(t.m[0].bytes[0] == 2 * 4096 && t.m[0].bytes[1] == 2 * 4096 &&
		  t.m[0].bytes[2] == 2 * 4096 && t.m[0].bytes[3] == 4096);
	CU_ASSERT(t.m[1].bytes[1] == t.m[0].bytes[2] && t.m[1].bytes[2] == t.m[0].bytes[1]);
	/* layer 2: every token to experts 0..5 on GPU 0 */
	CU_ASSERT(t.m[2].bytes[0] == 3 * 4096 && t.m[2].bytes[2] == 2 * 4096 &&
		  t.m[2].bytes[1] == 0 && t.m[2].bytes[3] == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.source, "deepseek-v2-lite task intent"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.source, "MIT"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.source, "exact dispatch"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.source, "EP2 (1x2)"));
	fast_traffic_free(&t);

	/* one layer, no combine, no dedup, other bytes per token */
	uint32_t one = 1;
	o.layers = &one;
	o.nlayers = 1;
	o.no_combine = true;
	o.no_dedup = true;
	o.token_bytes = 10;
	CU_ASSERT_EQUAL_FATAL(fast_moe_import(&o, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL_FATAL(t.count, 1);
	CU_ASSERT(t.m[0].bytes[0] == 90 && t.m[0].bytes[1] == 90 && t.m[0].bytes[2] == 70 &&
		  t.m[0].bytes[3] == 50);
	fast_traffic_free(&t);
}

static void test_moe__import_counts_sources(void)
{
	struct fast_moe_import o = imp("mixtral", 8);
	struct fast_traffic t;
	struct fast_err err = { 0 };

	/* Mixtral: 10 tokens, counts 4,2,2,2,2,2,2,4 over 8 GPUs (1 expert each) */
	CU_ASSERT_EQUAL_FATAL(fast_moe_import(&o, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL_FATAL(t.count, 4);
	CU_ASSERT_STRING_EQUAL(t.m[2].label, "layer7/dispatch");
	uint64_t col0 = 0, sum = 0;
	for (int s = 0; s < 8; s++)
		col0 += t.m[0].bytes[s * 8 + 0];
	for (int i = 0; i < 64; i++)
		sum += t.m[0].bytes[i];
	CU_ASSERT_EQUAL(col0, 4 * 8192);
	CU_ASSERT_EQUAL(sum, 20 * 8192);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.source, "Apache-2.0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.source, "per-expert counts"));
	fast_traffic_free(&t);

	o.selection = "top1";
	CU_ASSERT_EQUAL_FATAL(fast_moe_import(&o, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL(t.count, 2); /* top1 has layer 0 only */
	fast_traffic_free(&t);

	/* OLMoE layer 0: 64 tokens x top-8, 8 per expert; EP4 round-robin */
	o = imp("olmoe", 4);
	o.experts_at = FAST_PLACE_ROUND_ROBIN;
	CU_ASSERT_EQUAL_FATAL(fast_moe_import(&o, NULL, &t, &err), 0);
	for (int s = 0; s < 4; s++)
		for (int d = 0; d < 4; d++)
			CU_ASSERT_EQUAL(t.m[0].bytes[s * 4 + d], 32 * 4096);
	fast_traffic_free(&t);

	/* DeepSeek other tasks come from the per-sequence file */
	o = imp("deepseek-v2-lite", 2);
	o.domain = "law";
	CU_ASSERT_EQUAL_FATAL(fast_moe_import(&o, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL(t.count, 2);
	CU_ASSERT(t.m[0].bytes[0] == 12 * 4096 && t.m[0].bytes[2] == 12 * 4096);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.source, "per-sequence"));
	fast_traffic_free(&t);

	/* switch-base-128: one pooled layer, 256 tokens top-1, expert 0 hot */
	o = imp("switch128", 4);
	CU_ASSERT_EQUAL_FATAL(fast_moe_import(&o, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL(t.count, 2);
	CU_ASSERT_STRING_EQUAL(t.m[0].label, "pooled/dispatch");
	uint64_t c0 = 0;
	for (int s = 0; s < 4; s++)
		c0 += t.m[0].bytes[s * 4];
	CU_ASSERT_EQUAL(c0, (129 + 31) * 1536);
	fast_traffic_free(&t);
}

static void test_moe__import_errors(void)
{
	struct fast_moe_import o = imp("deepseek-v2-lite", 2);
	struct fast_traffic t;
	struct fast_err err = { 0 };
	uint32_t l9 = 9;

	o.layers = &l9;
	o.nlayers = 1;
	CU_ASSERT_EQUAL(fast_moe_import(&o, NULL, &t, &err), FAST_EUSAGE);
	CU_ASSERT_STRING_EQUAL(err.msg, "deepseek-v2-lite intent: no layer 9 (layers 1..2)");
	o = imp("gpt5", 2);
	CU_ASSERT_EQUAL(fast_moe_import(&o, NULL, &t, &err), FAST_EUSAGE);
	o = imp("olmoe", 2);
	o.domain = "poetry";
	CU_ASSERT_EQUAL(fast_moe_import(&o, NULL, &t, &err), FAST_EUSAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no data for domain 'poetry'"));
	o = imp("mixtral", 12); /* 8 experts on 12 GPUs */
	CU_ASSERT_EQUAL(fast_moe_import(&o, NULL, &t, &err), FAST_EUSAGE);
	o = imp("olmoe", 2);
	o.data_dir = "tests/data/nonexistent";
	CU_ASSERT_EQUAL(fast_moe_import(&o, NULL, &t, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tests/data/nonexistent/olmoe_allenai/expert_counts.csv"));
}

static void test_moe__import_tokens_fixture_groups(void)
{
	struct fast_moe_import o = imp("deepseek-v2-lite", 2);
	struct fast_traffic t, b;
	struct fast_err err = { 0 };
	/* layer 1 at EP2, by hand from the fixture: tokens 0-2 on GPU 0 go to
	 * {0}, {0,1}, {1}; tokens 3-4 on GPU 1 to {0}, {0,1} */
	const uint32_t src[] = { 0, 0, 0, 1, 1 }, nd[] = { 1, 2, 1, 1, 2 };
	const uint32_t dsts[] = { 0, 0, 1, 1, 0, 0, 1 };

	CU_ASSERT_EQUAL_FATAL(fast_moe_import(&o, NULL, &b, &err), 0);
	o.tokens = true;
	CU_ASSERT_EQUAL_FATAL(fast_moe_import(&o, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL_FATAL(t.count, 4);
	CU_ASSERT_EQUAL(t.m[0].kind, FAST_TRAFFIC_DISPATCH);
	CU_ASSERT_EQUAL(t.m[1].kind, FAST_TRAFFIC_COMBINE);
	CU_ASSERT_EQUAL(t.m[0].token_bytes, 4096);
	CU_ASSERT_EQUAL_FATAL(t.m[0].ngroups, 5);
	for (uint32_t g = 0; g < 5; g++) {
		CU_ASSERT_EQUAL(t.m[0].groups[g].src, src[g]);
		CU_ASSERT_EQUAL(t.m[0].groups[g].ndst, nd[g]);
		CU_ASSERT_EQUAL(t.m[0].groups[g].tokens, 1);
	}
	CU_ASSERT(memcmp(t.m[0].dsts, dsts, sizeof dsts) == 0);
	CU_ASSERT_EQUAL(t.m[2].ngroups, 2); /* layer 2: [0,[0],3] [1,[0],2] */
	CU_ASSERT_EQUAL(t.m[2].groups[0].tokens, 3);
	for (uint32_t k = 0; k < 4; k++) {
		CU_ASSERT_STRING_EQUAL(t.m[k].label, b.m[k].label);
		CU_ASSERT(memcmp(t.m[k].bytes, b.m[k].bytes, 4 * sizeof *b.m[k].bytes) == 0);
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(t.source, "token groups"));
	fast_traffic_free(&t);
	fast_traffic_free(&b);
}

/* The acceptance test of issue 15: on the real DeepSeek-V2-Lite routing
 * the byte view of --tokens is the byte import, byte for byte. */
static void test_moe__tokens_byte_view_is_the_byte_import(void)
{
	static const uint32_t eps[] = { 16, 32, 64 }, layers[] = { 1, 5, 13, 26 };

	for (int i = 0; i < 3 + 2; i++) {
		struct fast_moe_import o;
		struct fast_traffic t, b;
		struct fast_err err = { 0 };
		uint32_t ng = eps[i < 3 ? i : 0];

		memset(&o, 0, sizeof o);
		o.source = "deepseek-v2-lite";
		o.data_dir = "data/moe";
		o.ng = ng;
		o.gpus_per_server = 8;
		o.layers = layers;
		o.nlayers = 4;
		if (i == 3) /* the other placements too */
			o.experts_at = FAST_PLACE_ROUND_ROBIN;
		if (i == 4)
			o.tokens_at = FAST_PLACE_ROUND_ROBIN;
		CU_ASSERT_EQUAL_FATAL(fast_moe_import(&o, NULL, &b, &err), 0);
		o.tokens = true;
		CU_ASSERT_EQUAL_FATAL(fast_moe_import(&o, NULL, &t, &err), 0);
		CU_ASSERT_EQUAL_FATAL(t.count, 8);
		for (uint32_t k = 0; k < 8; k++) {
			uint64_t tokens = 0;
			CU_ASSERT_STRING_EQUAL(t.m[k].label, b.m[k].label);
			CU_ASSERT(memcmp(t.m[k].bytes, b.m[k].bytes,
					 (size_t)ng * ng * sizeof *b.m[k].bytes) == 0);
			for (uint32_t g = 0; g < t.m[k].ngroups; g++)
				tokens += t.m[k].groups[g].tokens;
			CU_ASSERT_EQUAL(tokens, 8222); /* every token, once */
			if (k % 2) /* the combine has the dispatch's groups */
				CU_ASSERT(t.m[k].ngroups == t.m[k - 1].ngroups &&
					  memcmp(t.m[k].dsts, t.m[k - 1].dsts,
						 t.m[k].ndsts * sizeof *t.m[k].dsts) == 0);
		}
		fast_traffic_free(&t);
		fast_traffic_free(&b);
	}
}

static void test_moe__tokens_refused_without_per_token_routing(void)
{
	static const char *const counts_only[] = { "olmoe", "mixtral", "switch128" };
	struct fast_moe_import o;
	struct fast_traffic t;
	struct fast_err err = { 0 };

	for (int i = 0; i < 3; i++) {
		o = imp(counts_only[i], 8);
		o.tokens = true;
		CU_ASSERT_EQUAL(fast_moe_import(&o, NULL, &t, &err), FAST_EUSAGE);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--tokens needs per-token routing"));
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, i == 2 ? "only pooled expert counts"
							       : "only per-layer expert counts"));
	}
	o = imp("deepseek-v2-lite", 2);
	o.domain = "law";
	o.tokens = true;
	CU_ASSERT_EQUAL(fast_moe_import(&o, NULL, &t, &err), FAST_EUSAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "deepseek-v2-lite task law: --tokens needs "
					       "per-token routing, and this data has only "
					       "per-sequence expert counts"));
	o = imp("deepseek-v2-lite", 2);
	o.tokens = true;
	o.no_dedup = true;
	CU_ASSERT_EQUAL(fast_moe_import(&o, NULL, &t, &err), FAST_EUSAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--no-dedup does not apply to --tokens"));
	{
		/* the group limit: layer 1 has 5 groups, layer 2 two more */
		struct fast_limits lim;
		fast_limits_default(&lim);
		lim.max_groups = 6;
		o.no_dedup = false;
		CU_ASSERT_EQUAL(fast_moe_import(&o, &lim, &t, &err), FAST_ELIMIT);
		CU_ASSERT_STRING_EQUAL(err.msg, "layer 2: more than 6 token groups in all (raise it with --max-groups)");
		lim.max_groups = 7;
		CU_ASSERT_EQUAL(fast_moe_import(&o, &lim, &t, &err), 0);
		fast_traffic_free(&t);
	}
}

UNIT_MAIN("moe",
	  UNIT_TEST(test_moe__expert_placement),
	  UNIT_TEST(test_moe__token_sources),
	  UNIT_TEST(test_moe__token_counted_once_per_gpu),
	  UNIT_TEST(test_moe__pairs_are_no_dedup_columns),
	  UNIT_TEST(test_moe__eplb_by_hand),
	  UNIT_TEST(test_moe__eplb_global_by_hand),
	  UNIT_TEST(test_moe__groups_split_by_token_share),
	  UNIT_TEST(test_moe__raw_parser_errors_name_the_line),
	  UNIT_TEST(test_moe__csv_parser_errors_name_the_line),
	  UNIT_TEST(test_moe__import_deepseek_per_token),
	  UNIT_TEST(test_moe__import_counts_sources),
	  UNIT_TEST(test_moe__import_errors),
	  UNIT_TEST(test_moe__import_tokens_fixture_groups),
	  UNIT_TEST(test_moe__tokens_byte_view_is_the_byte_import),
	  UNIT_TEST(test_moe__tokens_refused_without_per_token_routing))
