/*
 * test_json.c - the strict JSON layer: syntax errors with line:column,
 * case-sensitive keys, unknown and duplicate keys, exact integers, paths.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "lib/base/json.h"

static struct fast_json *parse(const char *text, struct fast_err *err)
{
	struct fast_json *doc = NULL;
	if (fast_json_parse(text, strlen(text), "t.json", &doc, err) < 0)
		return NULL;
	return doc;
}

static void test_json__syntax_error_has_line_and_column(void)
{
	struct fast_err err = { 0 };
	CU_ASSERT_PTR_NULL(parse("{\n  \"a\": 1,\n  \"b\": ]\n}", &err));
	CU_ASSERT_EQUAL(err.code, FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.json:3:"));
	CU_ASSERT_PTR_NULL(parse("{\"a\": 1} x", &err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "trailing"));
	CU_ASSERT_PTR_NULL(parse("", &err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.json:1:1"));
}

static void test_json__unknown_duplicate_and_case(void)
{
	static const char *const keys[] = { "servers", "gpus", NULL };
	struct fast_err err = { 0 };
	struct fast_jctx c;
	struct fast_json *doc;

	doc = parse("{\"servers\": 2, \"servers\": 3}", &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	fast_jctx_init(&c, "t.json", &err);
	CU_ASSERT_EQUAL(fast_jv_expect_object(&c, fast_json_root(doc), keys), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "t.json: /: duplicate key \"servers\"");
	fast_json_free(doc);

	doc = parse("{\"Servers\": 2}", &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_EQUAL(fast_jv_expect_object(&c, fast_json_root(doc), keys), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "did you mean \"servers\""));
	CU_ASSERT_PTR_NULL(fast_jv_get(fast_json_root(doc), "servers"));
	fast_json_free(doc);

	doc = parse("{\"servers\": 2, \"gpus\": 8}", &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_EQUAL(fast_jv_expect_object(&c, fast_json_root(doc), keys), 0);
	fast_json_free(doc);
}

static void test_json__integers_are_exact(void)
{
	struct fast_err err = { 0 };
	struct fast_jctx c;
	struct fast_json *doc;
	uint64_t x = 7;

	doc = parse("{\"a\": [1.5, -1, 9007199254740992, 9007199254740994, 1e3]}", &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	fast_jctx_init(&c, "t.json", &err);
	const struct fast_jv *arr = fast_jv_get(fast_json_root(doc), "a");
	const struct fast_jv *e = fast_jv_first(arr);
	size_t old = fast_jctx_push_key(&c, "a");
	size_t o2 = fast_jctx_push_index(&c, 0);
	CU_ASSERT_EQUAL(fast_jv_as_u64(&c, e, UINT64_MAX, &x), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "t.json: /a/0: must be a non-negative integer (got 1.5)");
	CU_ASSERT_EQUAL(x, 7);
	fast_jctx_pop(&c, o2);
	e = fast_jv_next(e);
	CU_ASSERT_EQUAL(fast_jv_as_u64(&c, e, UINT64_MAX, &x), FAST_EINPUT);
	e = fast_jv_next(e);
	CU_ASSERT_EQUAL(fast_jv_as_u64(&c, e, UINT64_MAX, &x), 0);
	CU_ASSERT_EQUAL(x, UINT64_C(1) << 53);
	e = fast_jv_next(e);
	CU_ASSERT_EQUAL(fast_jv_as_u64(&c, e, UINT64_MAX, &x), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "2^53"));
	e = fast_jv_next(e);
	CU_ASSERT_EQUAL(fast_jv_as_u64(&c, e, UINT64_MAX, &x), 0);
	CU_ASSERT_EQUAL(x, 1000);
	fast_jctx_pop(&c, old);
	CU_ASSERT_EQUAL(c.len, 0);
	fast_json_free(doc);
}

static void test_json__getters_report_paths(void)
{
	struct fast_err err = { 0 };
	struct fast_jctx c;
	struct fast_json *doc = parse("{\"o\": {\"bw\": -5, \"name\": 3}}", &err);
	double d = 1;
	char buf[8];

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	fast_jctx_init(&c, "topo.json", &err);
	const struct fast_jv *o = fast_jv_get(fast_json_root(doc), "o");
	size_t old = fast_jctx_push_key(&c, "o");
	CU_ASSERT_EQUAL(fast_jv_get_double(&c, o, "bw", true, 0, 1e9, true, &d), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "topo.json: /o/bw: must be > 0 (got -5)");
	CU_ASSERT_EQUAL(fast_jv_get_string(&c, o, "name", true, buf, sizeof buf), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "topo.json: /o/name: expected string, got number");
	CU_ASSERT_EQUAL(fast_jv_get_double(&c, o, "missing", true, 0, 1, false, &d), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "topo.json: /o: missing required key \"missing\"");
	CU_ASSERT_EQUAL(fast_jv_get_double(&c, o, "missing", false, 0, 1, false, &d), 0);
	CU_ASSERT_EQUAL(d, 1);
	fast_jctx_pop(&c, old);
	fast_json_free(doc);
}

static void test_json__nesting_limit_is_named(void)
{
	/* CJSON_NESTING_LIMIT levels parse; one more is named as such, at the
	 * bracket that opens it, even when a string holds brackets too */
	size_t n = (size_t)1000;
	char *text = malloc(2 * n + 16);
	struct fast_json *doc = NULL;
	struct fast_err err = { 0 };
	size_t j = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	for (size_t i = 0; i < n; i++)
		text[j++] = '[';
	for (size_t i = 0; i < n; i++)
		text[j++] = ']';
	text[j] = '\0';
	CU_ASSERT_EQUAL(fast_json_parse(text, j, "d.json", &doc, &err), 0);
	fast_json_free(doc);
	memcpy(text, "[\"[[\",\n", 7);
	j = 7;
	for (size_t i = 0; i < n; i++)
		text[j++] = '[';
	text[j] = '\0';
	CU_ASSERT_EQUAL(fast_json_parse(text, j, "d.json", &doc, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "d.json:2:1000: JSON nested deeper than 1000 levels "
					"(the parser's limit)");
	free(text);
}

static void expect_parse(const char *text, const char *msg)
{
	struct fast_json *doc = NULL;
	struct fast_err err = { 0 };
	int rc = fast_json_parse(text, strlen(text), "u.json", &doc, &err);

	if (!msg) {
		CU_ASSERT_EQUAL(rc, 0);
		fast_json_free(doc);
		return;
	}
	CU_ASSERT_EQUAL(rc, FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, msg);
}

static void test_json__invalid_utf8_is_refused_with_its_path(void)
{
	/* two-, three- and four-byte forms and escapes pass */
	expect_parse("{\"a\": \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \\u00e9\"}", NULL);
	expect_parse("{\"a\": [\"x\", \"\xff\"]}",
		     "u.json: /a/1: string is not valid UTF-8 (byte 0xff at offset 0)");
	/* overlong '/', a surrogate, above U+10FFFF, a truncated sequence */
	expect_parse("{\"a\": \"\xc0\xaf\"}",
		     "u.json: /a: string is not valid UTF-8 (byte 0xc0 at offset 0)");
	expect_parse("{\"a\": \"x\xed\xa0\x80\"}",
		     "u.json: /a: string is not valid UTF-8 (byte 0xed at offset 1)");
	expect_parse("{\"a\": \"\xf4\x90\x80\x80\"}",
		     "u.json: /a: string is not valid UTF-8 (byte 0xf4 at offset 0)");
	expect_parse("{\"a\": {\"b\": \"abc\xe2\x82\"}}",
		     "u.json: /a/b: string is not valid UTF-8 (byte 0xe2 at offset 3)");
	expect_parse("{\"a\": {\"k\xfe\": 1}}",
		     "u.json: /a: a key is not valid UTF-8 (byte 0xfe at offset 1 of the key)");
	expect_parse("\"\xff\"", "u.json: /: string is not valid UTF-8");
}

static void test_json__put_string_escapes(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fast_json_put_string(f, "a\"b\\c\n\x01");
	fputc(' ', f);
	fast_json_put_double(f, 0.1);
	fputc(' ', f);
	fast_json_put_double(f, 1e15);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf, "\"a\\\"b\\\\c\\n\\u0001\" 0.1 1000000000000000");
	free(buf);
}

/* Doubles print as the shortest decimal that reads back exactly: not the
 * 17 digits that %.17g gives when %.15g does not round-trip. */
static void test_json__put_double_is_shortest_exact(void)
{
	static const struct { double v; const char *want; } cases[] = {
		{ 38.0 / 45.0, "0.8444444444444444" },  /* %.17g: 0.84444444444444444 */
		{ 0.1 + 0.2, "0.30000000000000004" },    /* needs all 17 */
		{ 1.5e-7, "1.5e-07" },
		{ -2.5, "-2.5" },
		{ 4096, "4096" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		fast_json_put_double(f, cases[i].v);
		fclose(f);
		CU_ASSERT_EQUAL(strtod(buf, NULL), cases[i].v);
		CU_ASSERT_STRING_EQUAL(buf, cases[i].want);
		free(buf);
	}
}

/* A renamed key: the new name, or the old one when only it is there;
 * both at once is an error naming the old one's path. */
static void test_json__renamed_key(void)
{
	struct fast_json *doc;
	struct fast_jctx c;
	struct fast_err err;
	const char *a = "{\"gpus\": 2}", *b = "{\"gpus_total\": 2}", *both = "{\"gpus\": 2, \"gpus_total\": 2}";

	CU_ASSERT_EQUAL_FATAL(fast_json_parse(a, strlen(a), "t.json", &doc, &err), 0);
	fast_jctx_init(&c, "t.json", &err);
	CU_ASSERT_STRING_EQUAL(fast_jv_renamed(&c, fast_json_root(doc), "gpus_total", "gpus"), "gpus");
	fast_json_free(doc);
	CU_ASSERT_EQUAL_FATAL(fast_json_parse(b, strlen(b), "t.json", &doc, &err), 0);
	CU_ASSERT_STRING_EQUAL(fast_jv_renamed(&c, fast_json_root(doc), "gpus_total", "gpus"), "gpus_total");
	fast_json_free(doc);
	CU_ASSERT_EQUAL_FATAL(fast_json_parse(both, strlen(both), "t.json", &doc, &err), 0);
	CU_ASSERT_PTR_NULL(fast_jv_renamed(&c, fast_json_root(doc), "gpus_total", "gpus"));
	CU_ASSERT_STRING_EQUAL(err.msg, "t.json: /gpus: both \"gpus\" and its new name \"gpus_total\": give one");
	fast_json_free(doc);
}

/* The path kept by push_key/push_index/pop against a naive reference
 * (snprintf of "/%s" and "/%zu", cut at FAST_JPATH_MAX - 1 bytes): seeded
 * random pushes and pops, deep enough to fill and cut the path, with
 * indices of every width and keys that need escaping or run long. */
static void test_json__path_matches_naive_reference(void)
{
	static const char *const keys[] = { "plans", "a/b", "x~y", "", "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789" };
	static const char *const shown[] = { "plans", "a~1b", "x~0y", "", "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz01234" }; /* cut at 77 */
	struct fast_err err;
	struct fast_jctx c;
	char ref[FAST_JPATH_MAX];
	size_t olds[64], rlens[64], depth = 0, rlen = 0;
	uint64_t x = 12345;
	int bad = 0, cut = 0;

	fast_jctx_init(&c, "t.json", &err);
	ref[0] = '\0';
	for (int step = 0; step < 20000; step++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (depth > 0 && ((x >> 33) % 3 == 0 || depth == 64)) {
			depth--;
			fast_jctx_pop(&c, olds[depth]);
			rlen = rlens[depth];
			ref[rlen] = '\0';
		} else {
			char comp[96];
			size_t k = (size_t)((x >> 40) % 6);
			int n;
			if (k < 5) {
				olds[depth] = fast_jctx_push_key(&c, keys[k]);
				snprintf(comp, sizeof comp, "%s", shown[k]);
			} else {
				size_t index = (size_t)(x >> 20) >> ((x >> 8) % 40);
				olds[depth] = fast_jctx_push_index(&c, index);
				snprintf(comp, sizeof comp, "%zu", index);
			}
			rlens[depth++] = rlen;
			n = snprintf(ref + rlen, sizeof ref - rlen, "/%s", comp);
			rlen = n < 0 || (size_t)n >= sizeof ref - rlen ? sizeof ref - 1 : rlen + (size_t)n;
		}
		bad += c.len != rlen || strcmp(c.path, ref) != 0;
		cut += rlen == sizeof ref - 1;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(cut > 0); /* the full path was reached, and cut */
}

UNIT_MAIN("json",
	  UNIT_TEST(test_json__syntax_error_has_line_and_column),
	  UNIT_TEST(test_json__unknown_duplicate_and_case),
	  UNIT_TEST(test_json__integers_are_exact),
	  UNIT_TEST(test_json__getters_report_paths),
	  UNIT_TEST(test_json__nesting_limit_is_named),
	  UNIT_TEST(test_json__invalid_utf8_is_refused_with_its_path),
	  UNIT_TEST(test_json__put_string_escapes),
	  UNIT_TEST(test_json__put_double_is_shortest_exact),
	  UNIT_TEST(test_json__renamed_key),
	  UNIT_TEST(test_json__path_matches_naive_reference))
