/*
 * fuzz_topo.c - libFuzzer target of the topology reader (fast_topo_parse).
 *
 * Any input must give either a topology that validates or an error with a
 * message; a topology that loads must survive a write/parse round trip and
 * write the same text again (the normalised form is a fixed point).
 */
#define _GNU_SOURCE
#include "fuzz_common.h"

#include "fast/topo.h"

static char *write_topo(const struct fast_topo *t, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct fast_err err;

	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(fast_topo_write(t, f, &err) == 0);
	FUZZ_CHECK(fclose(f) == 0);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fast_limits lim;
	struct fast_topo t, t2;
	struct fast_err err;
	char *text = fuzz_text(data, size);
	char *w1, *w2;
	size_t l1, l2;
	int rc;

	if (!text)
		return 0;
	fuzz_limits(&lim);
	memset(&err, 0x55, sizeof err);
	rc = fast_topo_parse(text, size, "topo.json", &lim, &t, &err);
	free(text);
	if (rc < 0) {
		FUZZ_CHECK_ERR(rc, err);
		return 0;
	}
	FUZZ_CHECK(fast_topo_validate(&t, &lim, &err) == 0);
	FUZZ_CHECK(fast_topo_ngpus(&t) >= 1 && fast_topo_ngpus(&t) <= lim.max_gpus);

	w1 = write_topo(&t, &l1);
	rc = fast_topo_parse(w1, l1, "round-trip.json", &lim, &t2, &err);
	if (rc < 0)
		fprintf(stderr, "re-reading the written topology failed: %s\n%s", err.msg, w1);
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(t2.servers == t.servers && t2.gpus == t.gpus && t2.up_kind == t.up_kind);
	w2 = write_topo(&t2, &l2);
	FUZZ_CHECK(l1 == l2 && memcmp(w1, w2, l1) == 0);
	free(w1);
	free(w2);
	return 0;
}
