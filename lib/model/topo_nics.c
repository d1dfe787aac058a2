/*
 * topo_nics.c - the NICs of a server: how local GPUs map onto them (ports,
 * topo.h), their rate overrides (a slow or failed NIC), and those parts of
 * loading, validating, hashing and writing a topology.
 *
 * An override list is short (FAST_NIC_OVERRIDES_MAX) and kept sorted by
 * (server, NIC), so a lookup is a binary search and two topologies with
 * the same overrides hash and write alike whatever order they came in.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/model/topo_internal.h"

static int cmp_override(const void *a, const void *b)
{
	const struct fast_nic_override *x = a, *y = b;

	if (x->server != y->server)
		return x->server < y->server ? -1 : 1;
	return x->nic < y->nic ? -1 : x->nic > y->nic;
}

static const struct fast_nic_override *find(const struct fast_topo *t, uint32_t s, uint32_t k)
{
	struct fast_nic_override key = { s, k, 0 };

	if (!t->noverrides)
		return NULL;
	return bsearch(&key, t->nic_override, t->noverrides, sizeof key, cmp_override);
}

double fast_topo_nic_fraction(const struct fast_topo *t, uint32_t s, uint32_t k)
{
	const struct fast_nic_override *o = find(t, s, k);

	return o ? o->fraction : 1.0;
}

void fast_topo_port_nics(const struct fast_topo *t, uint32_t p, uint32_t *k0, uint32_t *k1)
{
	if (t->nics <= t->gpus) {
		*k0 = p;
		*k1 = p + 1;
		return;
	}
	/* NIC k belongs to GPU floor(k G / K): the first NIC of p is ceil(p K / G) */
	*k0 = (uint32_t)(((uint64_t)p * t->nics + t->gpus - 1) / t->gpus);
	*k1 = (uint32_t)(((uint64_t)(p + 1) * t->nics + t->gpus - 1) / t->gpus);
}

uint32_t fast_topo_port_gpus(const struct fast_topo *t, uint32_t p)
{
	uint32_t first, end;

	if (t->nics >= t->gpus)
		return 1;
	/* GPU l is behind NIC floor(l K / G): the first GPU of p is ceil(p G / K) */
	first = (uint32_t)(((uint64_t)p * t->gpus + t->nics - 1) / t->nics);
	end = (uint32_t)(((uint64_t)(p + 1) * t->gpus + t->nics - 1) / t->nics);
	return end - first;
}

double fast_topo_port_nics_up(const struct fast_topo *t, uint32_t s, uint32_t p)
{
	uint32_t k0, k1;
	double sum = 0;

	fast_topo_port_nics(t, p, &k0, &k1);
	for (uint32_t k = k0; k < k1; k++)
		sum += fast_topo_nic_fraction(t, s, k);
	return sum;
}

double fast_topo_server_nics_up(const struct fast_topo *t, uint32_t s)
{
	double sum = 0;

	for (uint32_t k = 0; k < t->nics; k++)
		sum += fast_topo_nic_fraction(t, s, k);
	return sum;
}

uint32_t fast_topo_port_name(const struct fast_topo *t, uint32_t p, char *buf, size_t len)
{
	uint32_t k0, k1;

	fast_topo_port_nics(t, p, &k0, &k1);
	if (k1 - k0 == 1)
		snprintf(buf, len, "NIC %u", k0);
	else
		snprintf(buf, len, "NICs %u-%u", k0, k1 - 1);
	return k1 - k0;
}

double fast_topo_port_Bps(const struct fast_topo *t, uint32_t s, uint32_t p)
{
	return fast_topo_port_nics_up(t, s, p) * fast_tier_Bps(&t->out);
}

double fast_topo_gpu_out_Bps(const struct fast_topo *t, uint32_t g)
{
	uint32_t p = fast_topo_port_of(t, g % t->gpus);

	return fast_topo_port_Bps(t, g / t->gpus, p) / fast_topo_port_gpus(t, p);
}

double fast_topo_server_out_Bps(const struct fast_topo *t, uint32_t s)
{
	double sum = 0;

	for (uint32_t p = 0; p < fast_topo_ports(t); p++)
		sum += fast_topo_port_Bps(t, s, p);
	return sum;
}

bool fast_topo_nics_ideal(const struct fast_topo *t)
{
	if (t->nics != t->gpus)
		return false;
	for (uint32_t i = 0; i < t->noverrides; i++)
		if (t->nic_override[i].fraction != 1.0)
			return false;
	return true;
}

int fast_topo_set_nic(struct fast_topo *t, uint32_t s, uint32_t k, double f,
		      struct fast_err *err)
{
	struct fast_nic_override *o;

	if (s >= t->servers)
		return fast_err_set(err, FAST_EINPUT, "NIC %u:%u: server %u is out of range (%u servers)",
				    s, k, s, t->servers);
	if (k >= t->nics)
		return fast_err_set(err, FAST_EINPUT,
				    "NIC %u:%u: NIC %u is out of range (%u NICs per server)", s, k,
				    k, t->nics);
	if (!(f >= 0.0 && f <= 1.0))
		return fast_err_set(err, FAST_EINPUT,
				    "NIC %u:%u: the rate fraction must be in [0, 1] (0 = down), got %g",
				    s, k, f);
	o = (struct fast_nic_override *)find(t, s, k);
	if (o) {
		o->fraction = f;
		return 0;
	}
	if (t->noverrides >= FAST_NIC_OVERRIDES_MAX)
		return fast_err_set(err, FAST_ELIMIT, "NIC %u:%u: more than %d NIC overrides", s, k,
				    FAST_NIC_OVERRIDES_MAX);
	t->nic_override[t->noverrides++] = (struct fast_nic_override){ s, k, f };
	qsort(t->nic_override, t->noverrides, sizeof *o, cmp_override);
	return 0;
}

/* --- loading ------------------------------------------------------------ */

static const char *const override_keys[] = { "server", "nic", "fraction", NULL };

static int load_override(struct fast_jctx *c, const struct fast_jv *v, struct fast_topo *t)
{
	uint32_t s = 0, k = 0;
	double f = 1;
	int rc;

	if ((rc = fast_jv_expect_object(c, v, override_keys)) < 0 ||
	    (rc = fast_jv_get_u32(c, v, "server", true, 0, t->servers - 1, &s)) < 0 ||
	    (rc = fast_jv_get_u32(c, v, "nic", true, 0, t->nics - 1, &k)) < 0 ||
	    (rc = fast_jv_get_double(c, v, "fraction", true, 0, 1, false, &f)) < 0)
		return rc;
	if (find(t, s, k))
		return fast_jctx_fail(c, FAST_EINPUT,
				      "a second override of server %u NIC %u (one per NIC)", s, k);
	if (t->noverrides >= FAST_NIC_OVERRIDES_MAX)
		return fast_jctx_fail(c, FAST_ELIMIT, "more than %d NIC overrides",
				      FAST_NIC_OVERRIDES_MAX);
	t->nic_override[t->noverrides++] = (struct fast_nic_override){ s, k, f };
	qsort(t->nic_override, t->noverrides, sizeof t->nic_override[0], cmp_override);
	return 0;
}

int topo_load_nics(struct fast_jctx *c, const struct fast_jv *o, struct fast_topo *t)
{
	const struct fast_jv *a = fast_jv_get(o, "nic_overrides"), *v;
	uint64_t nics = t->gpus;
	size_t old, i = 0;
	int rc;

	if ((rc = fast_jv_get_u64(c, o, "nics_per_server", false, UINT32_MAX, &nics)) < 0)
		return rc;
	if (nics < 1 || nics > FAST_NICS_MAX) {
		fast_jctx_push_key(c, "nics_per_server");
		return fast_jctx_fail(c, FAST_EINPUT, "must be in [1, %u] (got %llu)", FAST_NICS_MAX,
				      (unsigned long long)nics);
	}
	t->nics = (uint32_t)nics;
	t->noverrides = 0;
	if (!a)
		return 0;
	old = fast_jctx_push_key(c, "nic_overrides");
	if ((rc = fast_jv_expect_array(c, a)) < 0)
		return rc;
	for (v = fast_jv_first(a); v; v = fast_jv_next(v), i++) {
		size_t at = fast_jctx_push_index(c, i);
		if ((rc = load_override(c, v, t)) < 0)
			return rc;
		fast_jctx_pop(c, at);
	}
	fast_jctx_pop(c, old);
	return 0;
}

/* --- validation, identity, writing -------------------------------------- */

int topo_validate_nics(const struct fast_topo *t, struct fast_err *err)
{
	double nominal = t->out.bw_GBps * t->out.efficiency * t->congestion.incast_floor /
			 t->core_oversub;

	if (t->nics < 1 || t->nics > FAST_NICS_MAX)
		return fast_err_set(err, FAST_EINPUT,
				    "/scale_out/nics_per_server: must be in [1, %u] (got %u)",
				    FAST_NICS_MAX, t->nics);
	if (t->noverrides > FAST_NIC_OVERRIDES_MAX)
		return fast_err_set(err, FAST_ELIMIT, "/scale_out/nic_overrides: more than %d",
				    FAST_NIC_OVERRIDES_MAX);
	for (uint32_t i = 0; i < t->noverrides; i++) {
		const struct fast_nic_override *o = &t->nic_override[i];
		if (o->server >= t->servers || o->nic >= t->nics || !(o->fraction >= 0.0) ||
		    !(o->fraction <= 1.0))
			return fast_err_set(err, FAST_EINPUT,
					    "/scale_out/nic_overrides/%u: server %u NIC %u fraction %g "
					    "is out of range (%u servers, %u NICs, fraction in [0, 1])",
					    i, o->server, o->nic, o->fraction, t->servers, t->nics);
		if (i && cmp_override(&t->nic_override[i - 1], o) >= 0)
			return fast_err_set(err, FAST_EINPUT,
					    "/scale_out/nic_overrides/%u: server %u NIC %u is overridden twice",
					    i, o->server, o->nic);
		if (o->fraction > 0.0 && o->fraction * nominal < FAST_TOPO_MIN_GBPS)
			return fast_err_set(err, FAST_EINPUT,
					    "/scale_out/nic_overrides/%u: server %u NIC %u at %g of the "
					    "nominal rate runs below %g GB/s (0 = down)",
					    i, o->server, o->nic, o->fraction, FAST_TOPO_MIN_GBPS);
	}
	for (uint32_t i = 0; i < t->noverrides; i++) {
		uint32_t s = t->nic_override[i].server;
		if ((i && t->nic_override[i - 1].server == s) || t->servers < 2)
			continue;
		if (fast_topo_server_out_Bps(t, s) <= 0.0)
			return fast_err_set(err, FAST_EINPUT,
					    "/scale_out/nic_overrides: every NIC of server %u is down "
					    "(its GPUs have no way out)", s);
	}
	return 0;
}

uint64_t topo_hash_nics(const struct fast_topo *t, uint64_t h)
{
	if (t->nics == t->gpus && !t->noverrides)
		return h;
	h = fast_hash_str(h, "nics");
	h = fast_hash_u64(h, t->nics);
	for (uint32_t i = 0; i < t->noverrides; i++) {
		h = fast_hash_u64(h, t->nic_override[i].server);
		h = fast_hash_u64(h, t->nic_override[i].nic);
		h = fast_hash_double(h, t->nic_override[i].fraction);
	}
	return h;
}

void fast_topo_put_nic_override(FILE *f, const struct fast_nic_override *o)
{
	fprintf(f, "{\"server\": %u, \"nic\": %u, \"fraction\": ", o->server, o->nic);
	fast_json_put_double(f, o->fraction);
	fputc('}', f);
}

void topo_write_nics(const struct fast_topo *t, FILE *f)
{
	if (!t->noverrides)
		return;
	fputs("    \"nic_overrides\": [", f);
	for (uint32_t i = 0; i < t->noverrides; i++) {
		fputs(i ? ",\n      " : "\n      ", f);
		fast_topo_put_nic_override(f, &t->nic_override[i]);
	}
	fputs("\n    ],\n", f);
}
