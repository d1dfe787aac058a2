/*
 * compile_fast.c - the FAST plan compiler, fast_sched_fast() (algo.h) (docs/DESIGN.md, "FAST, as this project
 * implements it"): intrinsic traffic over scale-up, sender balancing into
 * lanes, the server matrix, padding and Birkhoff decomposition (bvn.c),
 * one RAIL step per term and one implied REDIST step per stage; or, where
 * latency dominates, packed stages (compile_fast_packed.c): the N - 1
 * server shifts at once on disjoint rails.  This file is the driver: the
 * options, the decomposition, its order and split, the choice of packed or
 * staged; balancing is compile_fast_balance.c, the staged step graph
 * compile_fast_steps.c, NICs of unequal rates (lane targets by rate,
 * explicit stages) compile_fast_nics.c, what they share
 * compile_fast_internal.h.  What follows is the ideal fabric, one NIC per
 * GPU at one rate; on any other the lane targets and the server matrix
 * are compile_fast_nics.c's, and the models run at a GPU's share of its
 * NIC.
 *
 * Workload: one compile per traffic matrix, on every rank of a job when the
 * executor compiles on the fly, for up to a few thousand GPUs.  The plan is
 * compact: lanes hold the O(N^2 G^2) pieces once, stages are O(K N).  All
 * arithmetic is on integers, so the plan is byte-identical everywhere.
 *
 * Balancing (step 2): for each tile (A, B != A), GPU A_i must send r_i
 * bytes to server B; the lane target is t = ceil(sum_i r_i / G).  The bytes
 * of A_i for B form a stream (messages to B_0, B_1, ... in order); a GPU
 * keeps the first min(r_i, t) bytes of its stream and donors (r_i > t) hand
 * the rest, in donor order, to receivers (r_i < t) in receiver order, each
 * receiver filled to t before the next.  So lane (A -> B, i) holds its own
 * kept prefix followed by what it received, and every lane holds at most t
 * bytes; S[A][B] = t.
 *
 * Stages (steps 4-6): the terms of the decomposition (exact, or the
 * alpha-aware choice of bvn_search.c), put in the requested order (with
 * balance=jit, the long term needing the least balancing first: see
 * first_least_balancing()) and trimmed: a
 * stage's budget is the most any of its lanes still holds when it runs
 * (never less than the padding-free need, so every byte still goes), and
 * terms that carry nothing -- all-idle padding -- are dropped.  The local
 * copies D[s][s] get no transfer: the checker takes an uncarried diagonal
 * as an implicit local copy.
 *
 * Pipeline (step 8): balancing first; the intrinsic step waits for the
 * first balancing step and then overlaps stage 1; stage k+1 waits for
 * stage k; redistribution k waits for stage k and overlaps stage k+1.
 * With balance=jit the handovers move in two `up` steps: first those of
 * the tiles stage 1 uses, which stage 1 waits for, then all the others,
 * which stage 2 waits for, so each lane is complete before its cursor
 * starts (checker rule: a GPU sends only what it holds) and scale-up does
 * the urgent ones first (see group_index(), compile_fast_internal.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/compile/compile_fast_internal.h"

/* Reserve the plan's pieces and lanes once, from upper bounds: a tile's
 * lanes hold its non-zero messages plus at most one split per donor and
 * per receiver, its handovers at most as many again, the intrinsic step at
 * most N G^2.  Unused capacity is never touched, so it costs address space, not
 * memory; it saves the copies and faults of repeated doubling. */
static int reserve(struct builder *bd, uint64_t pieces, uint64_t lanes)
{
	return fast_plan_reserve(bd->p, 0, 0, 0, pieces, lanes, bd->err);
}

/* The server matrix (FAST_EINPUT on overflow) and the loads r_i of every
 * tile, which are parts of its sums, in one pass over D. */
static int loads(struct builder *bd)
{
	return fast_bvn_server_loads(bd->D, bd->N, bd->G, bd->S, bd->load, &bd->nnz, bd->err);
}

/* Reserve the step graph once: steps (a rail and a redistribution per
 * stage, two balancing steps, the intrinsic step), their dependencies (at
 * most three per stage and two more) and transfers (intrinsic pairs and at
 * most one per handover): the doubling of the plan builder cost a twentieth
 * of a small compile. */
static int reserve_graph(struct builder *bd, uint32_t K)
{
	return fast_plan_reserve(bd->p, 2 * (uint64_t)K + 4, 3 * (uint64_t)K + 4,
				 (uint64_t)bd->N * bd->G * bd->G + bd->nmoves + 1, 0, 0, bd->err);
}

/* Split the last stage while that pays: its redistribution over
 * scale-up is exposed after the last rail step, so the last term
 * (perm, w) becomes (perm, w - x) then (perm, x), with x chosen so that
 * the redistribution of the w - x part takes as long as the rail time of
 * the x part, and only the x part's redistribution is left exposed.  One
 * split saves (w - x) * rho of exposure for one more stage (out and up
 * per-step costs); each lane still sends the same bytes to the same
 * server, in two parts.  rho and beta are seconds per lane byte of
 * redistribution (a share (G - 1) / G crosses a GPU's switch port; on a
 * mesh each link carries 1 / G) and of a rail stage (a lane at `out`
 * bytes/s: the NIC's rate, or r0 where NICs differ).  The stage count
 * stays within the Birkhoff bound n^2 - 2n + 2. */
static int split_tail(struct fast_bvn *bv, const struct fast_topo *topo, double out,
		      struct fast_err *err)
{
	uint32_t n = bv->n, G = topo->gpus;
	double up = fast_tier_Bps(&topo->up);
	double beta, rho, cost;

	if (bv->nterms == 0 || G < 2 || !(up > 0) || !(out > 0))
		return 0;
	beta = 1 / out;
	rho = (topo->up_kind == FAST_UP_MESH ? 1.0 : (double)(G - 1)) / G / up;
	cost = fast_tier_step_s(&topo->out) + fast_tier_step_s(&topo->up);
	for (int splits = 0; splits < 16 && bv->nterms < fast_bvn_max_terms(n); splits++) {
		uint64_t w = bv->weight[bv->nterms - 1], x;
		uint32_t *perm;
		uint64_t *wt;
		x = (uint64_t)((double)w * (rho / (rho + beta)));
		if (x == 0 || x >= w || (double)(w - x) * rho <= cost)
			break;
		perm = fast_reallocarray(bv->perm, ((size_t)bv->nterms + 1) * n, sizeof *perm);
		if (!perm)
			return fast_err_set(err, FAST_ENOMEM, "fast: out of memory (stages)");
		bv->perm = perm;
		wt = fast_reallocarray(bv->weight, (size_t)bv->nterms + 1, sizeof *wt);
		if (!wt)
			return fast_err_set(err, FAST_ENOMEM, "fast: out of memory (stages)");
		bv->weight = wt;
		memcpy(perm + (size_t)bv->nterms * n, perm + ((size_t)bv->nterms - 1) * n,
		       n * sizeof *perm);
		wt[bv->nterms - 1] = w - x;
		wt[bv->nterms++] = x;
	}
	return 0;
}

/* balance=jit: stage 1 waits for the balancing of its tiles with every
 * NIC idle, while later stages' balancing hides behind stage 1.  So among
 * the terms within a quarter of the largest weight (a stage long enough
 * to hide the rest), the one whose tiles need the least balancing goes
 * first -- cost: the largest excess of one GPU over its lane target, the
 * longest handover -- and the others keep their order.  What it gains
 * (FAST / bound with and without it) is in docs/algorithms.md, "Compiler options,
 * measured".  Switching only when the cost at least halves, or choosing by
 * a model of both balancing steps against the stage, did worse on average. */
static int first_least_balancing(struct builder *bd, struct fast_bvn *bv)
{
	uint32_t N = bd->N, G = bd->G, best = 0, *row;
	uint64_t best_cost = UINT64_MAX, wmax = 0, w;

	for (uint32_t k = 0; k < bv->nterms; k++)
		if (bv->weight[k] > wmax)
			wmax = bv->weight[k];
	for (uint32_t k = 0; k < bv->nterms; k++) {
		uint64_t cost = 0;
		if (bv->weight[k] < wmax - wmax / 4)
			continue;
		for (uint32_t a = 0; a < N; a++) {
			uint32_t b = bv->perm[(size_t)k * N + a];
			uint64_t t = bd->S[(size_t)a * N + b];
			const uint64_t *r = &bd->load[((size_t)a * N + b) * G];
			if (b == a)
				continue;
			if (bd->nx) { /* lane targets by NIC rate (compile_fast_nics.c) */
				fast_nics_targets(bd, a, b, bd->tt);
				for (uint32_t i = 0; i < G; i++)
					if (r[i] > bd->tt[i] && r[i] - bd->tt[i] > cost)
						cost = r[i] - bd->tt[i];
				continue;
			}
			for (uint32_t i = 0; i < G; i++)
				if (r[i] > t && r[i] - t > cost)
					cost = r[i] - t;
		}
		if (cost < best_cost) {
			best_cost = cost;
			best = k;
		}
	}
	if (best == 0)
		return 0;
	row = fast_calloc(N, sizeof *row);
	if (!row)
		return oom(bd, "stage order");
	memcpy(row, bv->perm + (size_t)best * N, N * sizeof *row);
	memmove(bv->perm + N, bv->perm, (size_t)best * N * sizeof *bv->perm);
	memcpy(bv->perm, row, N * sizeof *row);
	w = bv->weight[best];
	memmove(bv->weight + 1, bv->weight, best * sizeof *bv->weight);
	bv->weight[0] = w;
	free(row);
	return 0;
}

/* Decompose the server matrix as the options say, ordered and trimmed. */
static int decompose(struct builder *bd, const struct fast_topo *topo,
		     const struct fast_algo_opts *o, struct fast_bvn *bv, uint64_t *quantum)
{
	uint32_t N = bd->N;
	int rc;

	if (o->stages == FAST_STAGES_EXACT) {
		/* q = 1: pad a copy and decompose it exactly */
		rc = fast_bvn_quantized(bd->S, N, 1, bv, bd->err);
		*quantum = 1;
	} else {
		struct fast_bvn_model m;
		struct fast_bvn_search_info info;
		m.stage_s = fast_tier_step_s(&topo->out);
		m.Bps = bd->mode == NICS_IDEAL ? fast_tier_Bps(&topo->out) : bd->r0;
		if (!(m.Bps > 0))
			m.Bps = 1; /* validated topologies never get here */
		rc = fast_bvn_search(bd->S, N, &m, bv, &info, bd->err);
		*quantum = info.quantum;
	}
	if (rc < 0)
		return rc;
	rc = fast_bvn_sort(bv, o->order == FAST_ORDER_LARGEST_FIRST    ? FAST_BVN_LARGEST_FIRST
			       : o->order == FAST_ORDER_SMALLEST_FIRST ? FAST_BVN_SMALLEST_FIRST
								       : FAST_BVN_AS_FOUND,
			   bd->err);
	if (rc < 0) {
		fast_bvn_free(bv);
		return rc;
	}
	if (bd->jit && (rc = first_least_balancing(bd, bv)) < 0) {
		fast_bvn_free(bv);
		return rc;
	}
	fast_bvn_trim(bv, bd->S);
	/* the parts of a split term stay trimmed: the lane that needed w
	 * needs w - x of the first part and x of the second */
	if ((rc = split_tail(bv, topo, bd->mode == NICS_IDEAL ? fast_tier_Bps(&topo->out) : bd->r0,
			     bd->err)) < 0) {
		fast_bvn_free(bv);
		return rc;
	}
	return 0;
}

/* balance=jit: the balancing group of each tile (bd->first), that of the
 * first stage (wave) that uses it; where NICs differ, a group per octave
 * of stages (group_index). */
static void balancing_groups(struct builder *bd, const struct fast_bvn *bv)
{
	uint32_t N = bd->N;

	bd->fine_groups = bd->jit && !bd->packed && bd->mode == NICS_WEIGHTED;
	bd->ngroups = !bd->jit				  ? 1
		      : bd->fine_groups && bv->nterms ? group_index(rail_of(bd, bv->nterms - 1), true) + 1
						      : 2;
	if (bd->packed && bd->jit) /* group 1: the waves after the first */
		for (uint32_t a = 0; a < N; a++)
			for (uint32_t b = 0; b < N; b++)
				bd->first[(size_t)a * N + b] =
					a != b && shift_of(N, a, b) >= pack_mod(N, bd->P);
	for (size_t k = bd->jit ? bv->nterms : 0; k-- > 0;) {
		uint32_t g = group_index(rail_of(bd, (uint32_t)k), bd->fine_groups);
		for (uint32_t a = 0; a < N; a++)
			bd->first[(size_t)a * N + bv->perm[k * N + a]] = g;
	}
}

/* How much faster (a fraction) grouped or unbalanced stages must model
 * than the staged or packed ones to be chosen (choose_shape). */
#define GROUP_GAIN 0.02

/* The schedule stages=auto or grouped compiles (the plan's options name
 * it). */
enum shape {
	SHAPE_STAGED = 0, /* a rail step per term (stages=exact too) */
	SHAPE_PACKED,     /* compile_fast_packed.c */
	SHAPE_GROUPED,    /* rail steps of several terms (compile_fast_group.c) */
	SHAPE_DIRECT,     /* unbalanced, the shifts in rail steps (compile_fast_direct.c) */
};

/* stages=auto (or grouped, the same): of the staged schedule bv, packed
 * stages (with may_pack, from three servers: two have one shift, the
 * staged schedule itself), grouped stages and the unbalanced ones (one
 * NIC per GPU at one rate, from three servers), the one of least
 * modelled time, grouped and unbalanced only GROUP_GAIN faster; set up in
 * bd (and bv).  stages=packed: checked packable.  *shape says which.
 * Where grouping is considered, balancing is modelled at a GPU's G - 1
 * mesh links together (Bb); elsewhere (stages=packed, NICs that differ)
 * at a switch port's rate, as before grouping. */
static int choose_shape(struct builder *bd, const struct fast_topo *topo,
			const struct fast_algo_opts *o, bool may_pack, struct fast_bvn *bv,
			enum shape *shape)
{
	bool autos = (o->stages == FAST_STAGES_AUTO || o->stages == FAST_STAGES_GROUPED) &&
		     bd->N > 2;
	bool pack = may_pack && (bd->packed || autos);
	bool group = !bd->packed && autos && bd->mode == NICS_IDEAL;
	struct cost c = fast_packed_cost(topo);
	struct balance_cost bc;
	double best, t;
	int rc;

	*shape = SHAPE_STAGED;
	if (!pack && !group)
		return 0;
	if (!group)
		c.Bb = c.Bu; /* stages=auto or packed: a switch port, as before */
	if (bd->mode != NICS_IDEAL)
		c.Bo = bd->r0; /* a lane at its GPU's share of the port */
	if (bd->fwd > 0)
		c.rho *= bd->fwd; /* a token plan's scale-up work (builder) */
	if ((rc = fast_packed_balance_costs(bd, &c, bv->nterms ? bv->perm : NULL, &bc)) < 0)
		return rc;
	if (bd->packed && !bc.packable)
		return fast_err_set(bd->err, FAST_EUSAGE,
				    "fast: --stages packed: a shift's NICs are down at one end of "
				    "a server pair it must join (packed stages are rail-aligned); "
				    "use --stages auto or exact");
	if (bd->packed)
		return 0;
	best = fast_staged_s(&c, bv, &bc);
	if (pack && bc.packable && (t = fast_packed_s(bd, &c, &bc)) < best) {
		best = t;
		*shape = SHAPE_PACKED;
	}
	/* grouped or unbalanced only where they model GROUP_GAIN faster: the
	 * model's error on one step of unequal flows (max-min sharing leaves
	 * a NIC idle that the model counts busy) is about that much */
	best *= 1 - GROUP_GAIN;
	if (group) {
		if ((rc = fast_group_choose(bd, &c, topo, bv, &t)) < 0)
			return rc;
		if (t < best && bd->nrail < bv->nterms) {
			best = t;
			*shape = SHAPE_GROUPED;
		}
		if ((rc = fast_direct_choose(bd, &c, topo, best, &t)) < 0)
			return rc;
		if (t < best) {
			best = t;
			*shape = SHAPE_DIRECT;
		}
	}
	if (*shape != SHAPE_GROUPED && *shape != SHAPE_DIRECT)
		bd->nrail = 0;
	if (*shape == SHAPE_DIRECT)
		return fast_direct_setup(bd, bv);
	if (*shape == SHAPE_PACKED) {
		bd->packed = true;
		fast_bvn_free(bv);
	}
	return 0;
}

/* What a compile may build: packed stages (not the token compiler, which
 * refuses stages=packed), the redistribution of explicit stages (not the
 * token compiler either, which writes its own). */
enum { MAY_PACK = 1, CROSSINGS_ONLY = 2 };

/* Packed or staged (stages=auto: the one of less modelled time; packed
 * only with MAY_PACK), then the plan. */
static int compile(const struct fast_topo *topo, const uint64_t *D,
		   const struct fast_algo_opts *opts, unsigned how, double fwd, struct fast_plan *plan,
		   struct fast_scratch *scratch, struct fast_err *err)
{
	struct fast_scratch own = { { 0 }, { 0 } };
	struct builder bd;
	struct fast_plan p;
	struct fast_bvn bv = { 0 };
	struct fast_algo_opts defaults;
	uint64_t quantum = 1, tiles;
	enum shape shape = SHAPE_STAGED;
	bool may_pack = how & MAY_PACK;
	int rc;

	if (!opts) {
		fast_algo_opts_default(&defaults);
		opts = &defaults;
	}
	p = *plan; /* built locally, handed back at the end either way */
	fast_plan_reset(&p, topo->servers, topo->gpus, "fast");
	*plan = p;
	if (topo->servers == 0 || topo->gpus == 0 ||
	    (uint64_t)topo->servers * topo->gpus > INT32_MAX)
		return fast_err_set(err, FAST_EINPUT, "fast: bad topology size %u x %u",
				    topo->servers, topo->gpus);
	memset(&bd, 0, sizeof bd);
	bd.N = topo->servers;
	bd.G = topo->gpus;
	bd.ng = bd.N * bd.G;
	bd.D = D;
	bd.jit = opts->balance == FAST_BALANCE_JIT;
	bd.err = err;
	bd.p = &p;
	bd.sc = scratch ? scratch : &own;
	bd.keep = scratch != NULL;
	bd.load = fast_scratch_room(bd.sc, SC_LOAD, (size_t)bd.N * bd.N * bd.G, sizeof *bd.load);
	bd.S = fast_scratch_room(bd.sc, SC_S, (size_t)bd.N * bd.N, sizeof *bd.S);
	bd.first = fast_scratch_room(bd.sc, SC_FIRST, (size_t)bd.N * bd.N, sizeof *bd.first);
	bd.budget = fast_scratch_room(bd.sc, SC_BUDGET, bd.N, sizeof *bd.budget);
	bd.tt = fast_scratch_room(bd.sc, SC_TARGET, bd.G, sizeof *bd.tt);
	bd.packed = may_pack && opts->stages == FAST_STAGES_PACKED && bd.N > 1;
	bd.redist = !(how & CROSSINGS_ONLY);
	bd.fwd = fwd;
	if (!bd.load || !bd.S || !bd.first || !bd.budget || !bd.tt) {
		rc = oom(&bd, "server matrix");
		goto out;
	}
	if ((rc = fast_nics_setup(&bd, topo)) < 0)
		goto out;
	/* loads() writes S and every load but the unread diagonal tiles' */
	memset(bd.first, 0, (size_t)bd.N * bd.N * sizeof *bd.first);
	tiles = (uint64_t)bd.N * (bd.N - 1);
	if ((rc = loads(&bd)) < 0 || (bd.nx && (rc = fast_nics_server_matrix(&bd)) < 0) ||
	    (rc = reserve(&bd, 2 * (bd.nnz + 2 * tiles * bd.G) + (uint64_t)bd.N * bd.G * bd.G,
			  tiles * bd.G)) < 0 ||
	    (!bd.packed && (rc = decompose(&bd, topo, opts, &bv, &quantum)) < 0))
		goto out;
	if ((rc = choose_shape(&bd, topo, opts, may_pack, &bv, &shape)) < 0)
		goto out;
	balancing_groups(&bd, &bv);
	for (uint32_t a = 0; a < bd.N; a++)
		for (uint32_t b = 0; b < bd.N; b++)
			if (a != b && (rc = fast_balance_tile(&bd, a, b)) < 0)
				goto out;
	bd.lane_pieces = p.npieces;
	if ((rc = reserve(&bd, p.npieces + bd.nmoves + (uint64_t)bd.N * bd.G * bd.G, 0)) < 0 ||
	    (rc = fast_balance_sort(&bd)) < 0 ||
	    (rc = reserve_graph(&bd, bd.packed ? bd.N - 1 : bv.nterms)) < 0 ||
	    (rc = bd.packed ? fast_packed_steps(&bd) : fast_steps_staged(&bd, &bv)) < 0)
		goto out;
	if (fast_nics_explicit(&bd))
		fast_nics_drop_lanes(&bd);
	{
		/* the plan's record of its options, spelled as the table spells them */
		char order[32], balance[32], stages[48] = "exact";
		fast_algo_option_print(fast_algo_option_find("order"), opts, order, sizeof order);
		fast_algo_option_print(fast_algo_option_find("balance"), opts, balance, sizeof balance);
		/* what was asked (auto or grouped), and what it chose */
		const char *asked = opts->stages == FAST_STAGES_GROUPED ? "grouped" : "auto";
		if (bd.packed && shape != SHAPE_PACKED)
			snprintf(stages, sizeof stages, "packed");
		else if (bd.packed)
			snprintf(stages, sizeof stages, "%s(packed)", asked);
		else if (shape == SHAPE_DIRECT && bd.nrail > 1)
			snprintf(stages, sizeof stages, "%s(direct,steps=%u)", asked, bd.nrail);
		else if (shape == SHAPE_DIRECT)
			snprintf(stages, sizeof stages, "%s(direct)", asked);
		else if (shape == SHAPE_GROUPED)
			snprintf(stages, sizeof stages, "%s(q=%llu,steps=%u)", asked,
				 (unsigned long long)quantum, bd.nrail);
		else if (opts->stages != FAST_STAGES_EXACT)
			snprintf(stages, sizeof stages, "%s(q=%llu)", asked, (unsigned long long)quantum);
		snprintf(p.options, sizeof p.options, "stages=%s order=%s balance=%s", stages, order,
			 balance);
	}
out:
	if (rc < 0)
		fast_plan_reset(&p, bd.N, bd.G, "fast");
	*plan = p;
	fast_bvn_free(&bv);
	fast_nics_free(&bd);
	free(bd.gstart);
	free(bd.dstart);
	fast_scratch_free(&own);
	return rc;
}

int fast_sched_fast_into(const struct fast_topo *topo, const uint64_t *D,
			   const struct fast_algo_opts *opts, struct fast_plan *plan,
			   struct fast_scratch *scratch, struct fast_err *err)
{
	return compile(topo, D, opts, MAY_PACK, 0, plan, scratch, err);
}

/* fast_sched_fast, fast_sched_fast_staged, fast_sched_fast_crossings */
static int compile_trimmed(const struct fast_topo *topo, const uint64_t *D,
			   const struct fast_algo_opts *opts, unsigned how, double fwd,
			   struct fast_plan *out, struct fast_err *err)
{
	struct fast_plan p;
	int rc;

	memset(&p, 0, sizeof p);
	if ((rc = compile(topo, D, opts, how, fwd, &p, NULL, err)) < 0) {
		fast_plan_free(&p);
		return rc;
	}
	/* give back a large unused reserve (mapped memory: shrinking is a
	 * remap); small ones stay, the allocator reuses them best as they are */
	fast_plan_trim(&p, 16u << 20);
	*out = p;
	return 0;
}

int fast_sched_fast_staged(const struct fast_topo *topo, const uint64_t *D,
			     const struct fast_algo_opts *opts, struct fast_plan *out,
			     struct fast_err *err)
{
	return compile_trimmed(topo, D, opts, 0, 0, out, err);
}

int fast_sched_fast_crossings(const struct fast_topo *topo, const uint64_t *D,
			      const struct fast_algo_opts *opts, double fwd, struct fast_plan *out,
			      struct fast_err *err)
{
	return compile_trimmed(topo, D, opts, CROSSINGS_ONLY, fwd, out, err);
}

int fast_sched_fast(const struct fast_topo *topo, const uint64_t *D,
		      const struct fast_algo_opts *opts, struct fast_plan *out,
		      struct fast_err *err)
{
	return compile_trimmed(topo, D, opts, MAY_PACK, 0, out, err);
}
