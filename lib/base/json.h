/*
 * json.h - strict JSON reading on top of cJSON (this file's .c is the only
 * user of cJSON), plus small helpers for the streaming writers.
 *
 * Reading: parse a whole buffer into a document, walk it with the fast_jv
 * accessors, and report errors through a struct fast_jctx that tracks the
 * JSON path ("/matrices/0/rows/3").  Keys are matched case-sensitively;
 * fast_jv_expect_object() rejects unknown and duplicate keys.  Byte counts
 * are integers in [0, 2^53].
 *
 * Ownership: a struct fast_json owns every node reachable from its root;
 * no node outlives fast_json_free().
 */
#ifndef FAST_JSON_H
#define FAST_JSON_H

#include <stdio.h>

#include "fast/common.h"

struct fast_json;
struct fast_jv;

enum fast_jtype {
	FAST_JNULL,
	FAST_JBOOL,
	FAST_JNUMBER,
	FAST_JSTRING,
	FAST_JARRAY,
	FAST_JOBJECT,
	FAST_JINVALID,
};

/* Parse text[0..len).  Syntax errors: FAST_EINPUT "name:line:col: ...". */
int fast_json_parse(const char *text, size_t len, const char *name,
		    struct fast_json **out, struct fast_err *err);
void fast_json_free(struct fast_json *doc);
const struct fast_jv *fast_json_root(const struct fast_json *doc);

/* Read a whole file into a NUL-terminated buffer (caller frees), refusing
 * files larger than max_bytes (FAST_ELIMIT) and unreadable ones
 * (FAST_EINPUT, with strerror). */
int fast_read_file(const char *path, uint64_t max_bytes, char **out, size_t *len,
		   struct fast_err *err);

enum fast_jtype fast_jv_type(const struct fast_jv *v);
const char *fast_jtype_name(enum fast_jtype t);
/* Case-sensitive member lookup; NULL if absent or v is not an object. */
const struct fast_jv *fast_jv_get(const struct fast_jv *obj, const char *key);
/* Array or object size (linear time). */
size_t fast_jv_size(const struct fast_jv *v);
/* Iteration over array elements or object members: first child, next
 * sibling, member key (NULL for array elements). */
const struct fast_jv *fast_jv_first(const struct fast_jv *v);
const struct fast_jv *fast_jv_next(const struct fast_jv *v);
const char *fast_jv_key(const struct fast_jv *v);
double fast_jv_number(const struct fast_jv *v);
const char *fast_jv_string(const struct fast_jv *v);
bool fast_jv_bool(const struct fast_jv *v);

/* Error context: file name plus the current JSON path. */
#define FAST_JPATH_MAX 256
struct fast_jctx {
	const char *file;
	char path[FAST_JPATH_MAX];
	size_t len;
	struct fast_err *err;
};
void fast_jctx_init(struct fast_jctx *c, const char *file, struct fast_err *err);
/* Push a path component; return the previous length for fast_jctx_pop. */
size_t fast_jctx_push_key(struct fast_jctx *c, const char *key);
size_t fast_jctx_push_index(struct fast_jctx *c, size_t index);
void fast_jctx_pop(struct fast_jctx *c, size_t old_len);
/* Record "file: /path: message" (path "/" at the root) and return code. */
int fast_jctx_fail(struct fast_jctx *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* v must be an object whose keys all appear in allowed (NULL-terminated),
 * each at most once. */
int fast_jv_expect_object(struct fast_jctx *c, const struct fast_jv *v,
			  const char *const *allowed);
int fast_jv_expect_array(struct fast_jctx *c, const struct fast_jv *v);

/* Value conversions at the current path (the caller pushed v's path). */
int fast_jv_as_u64(struct fast_jctx *c, const struct fast_jv *v, uint64_t max,
		   uint64_t *out);
int fast_jv_as_double(struct fast_jctx *c, const struct fast_jv *v, double min,
		      double max, bool min_exclusive, double *out);

/* Member getters: push the key, convert, pop.  When the member is absent,
 * required ones fail ("missing required key") and optional ones return 0
 * leaving *out untouched. */
int fast_jv_get_u64(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		    bool required, uint64_t max, uint64_t *out);
int fast_jv_get_u32(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		    bool required, uint32_t min, uint32_t max, uint32_t *out);
int fast_jv_get_double(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		       bool required, double min, double max, bool min_exclusive,
		       double *out);
int fast_jv_get_bool(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		     bool required, bool *out);
/* The key under which obj holds a member renamed from old_key to key: key
 * when old_key is absent (also when both are, so that "missing" names the
 * new one), old_key when only it is there; NULL, with the error recorded
 * (FAST_EINPUT), when both are. */
const char *fast_jv_renamed(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
			    const char *old_key);
/* Copies into buf (size bytes, NUL-terminated); too long is an error. */
int fast_jv_get_string(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		       bool required, char *buf, size_t size);

/* Writer helpers: a JSON string literal with escapes; a double as the
 * shortest decimal that reads back to the same value (fast_num_format;
 * integers print as integers, without exponent; NaN and infinities as
 * null). */
void fast_json_put_string(FILE *f, const char *s);
void fast_json_put_double(FILE *f, double v);

#endif
