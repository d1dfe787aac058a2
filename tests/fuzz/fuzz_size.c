/*
 * fuzz_size.c - libFuzzer target of the byte-size parser (fast_size_parse),
 * fed a NUL-terminated copy of the input as the command line would.
 *
 * A size that parses must print (fast_size_format) into a short buffer and
 * read back exactly from its decimal form.
 */
#include "fuzz_common.h"

#include "fast/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fast_err err;
	uint64_t v = 0, v2 = 0;
	char *text = fuzz_text(data, size);
	char buf[32], dec[32];
	int rc;

	if (!text)
		return 0;
	memset(&err, 0x55, sizeof err);
	rc = fast_size_parse(text, &v, &err);
	free(text);
	if (rc < 0) {
		FUZZ_CHECK_ERR(rc, err);
		return 0;
	}
	fast_size_format(v, buf, sizeof buf);
	FUZZ_CHECK(memchr(buf, '\0', sizeof buf) != NULL && buf[0] != '\0');
	snprintf(dec, sizeof dec, "%llu", (unsigned long long)v);
	FUZZ_CHECK(fast_size_parse(dec, &v2, &err) == 0 && v2 == v);
	return 0;
}
