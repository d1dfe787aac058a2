/*
 * moe_npy.h - NumPy .npy arrays of integers (NumPy's format description,
 * numpy/lib/format.py, versions 1.0, 2.0, 3.0): the one reader of routing
 * files (moe_routing.h) and placement files (moe_place.h), and the header
 * of the placement maps --placement-out writes.  Internal to lib/workload
 * (included by root path).  A parsed array views the caller's buffer; it
 * owns nothing.
 */
#ifndef FAST_MOE_NPY_H
#define FAST_MOE_NPY_H

#include <stdio.h>

#include "fast/common.h"

#define FAST_NPY_MAXDIM 3

/* An integer array of a .npy file, viewed in place (little-endian, C
 * order).  data points into the caller's buffer, which must outlive it. */
struct fast_npy {
	const unsigned char *data;
	uint32_t version;                /* 1, 2 or 3 */
	uint32_t ndim;                   /* 0..FAST_NPY_MAXDIM */
	uint64_t shape[FAST_NPY_MAXDIM];
	uint64_t count;                  /* product of shape */
	uint32_t itemsize;               /* 1, 2, 4, 8 */
	bool is_signed;
};

/* Parse buf[0..len): magic, version, header dict ('descr', 'fortran_order',
 * 'shape'), then exactly count * itemsize bytes of data.  FAST_EINPUT with
 * "name: ..." for a bad magic or version, a header that is not the dict
 * NumPy writes, big-endian or non-integer dtypes, Fortran order, more than
 * FAST_NPY_MAXDIM dimensions, a truncated file or trailing bytes. */
int fast_npy_parse(const char *buf, size_t len, const char *name, struct fast_npy *out,
		   struct fast_err *err);
/* Element i (flat C order) as a signed value; unsigned 64-bit values over
 * INT64_MAX read as INT64_MAX (out of every range we accept). */
int64_t fast_npy_at(const struct fast_npy *a, uint64_t i);
/* "[a, b, c]" (numpy's index) of flat element i into buf (size n). */
void fast_npy_pos(const struct fast_npy *a, uint64_t i, char *buf, size_t n);

/* Write a version 1.0 header for a C-order array of dtype descr ("<i8")
 * and the given shape (ndim <= FAST_NPY_MAXDIM), padded with spaces so
 * that the data starts at a multiple of 64 bytes, as NumPy writes it.
 * The caller writes the data and checks ferror(f). */
void fast_npy_write_header(FILE *f, const char *descr, uint32_t ndim, const uint64_t *shape);

#endif
