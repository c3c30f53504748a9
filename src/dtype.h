/*
 * Datatypes and (+) kernels: 12 dtypes x 11 predefined ops, and user-defined ops.
 * Convention everywhere: inout[i] = in[i] (+) inout[i], `in` covering lower ranks.
 */
#ifndef UCOLL_DTYPE_H
#define UCOLL_DTYPE_H

#include "ucoll.h"

#include <stddef.h>

#define UCOLL_NDTYPES 12 /* UCOLL_BFLOAT16 + 1 */
#define UCOLL_NOPS 11    /* UCOLL_OP_AVG + 1 */
/* handles of user ops are UCOLL_USER_OP_BASE + slot */
#define UCOLL_USER_OP_BASE 1000
#define UCOLL_MAX_USER_OPS 1024

/* bytes of one element, 0 for an unknown dtype */
size_t dtype_size(ucoll_dtype_t dtype);
const char *dtype_name(ucoll_dtype_t dtype);                 /* "int8" ...; NULL if unknown */
int dtype_from_name(const char *name, ucoll_dtype_t *dtype); /* 0 or -1 */
const char *op_name(ucoll_op_t op);                          /* "sum" ... "user"; NULL if unknown */
int op_from_name(const char *name, ucoll_op_t *op);          /* predefined names only; 0 or -1 */

/* UCOLL_OK if op can be applied to dtype (op is predefined or a live user op, dtype known,
 * no bitwise/logical op on floating types, AVG on floating types only), else
 * UCOLL_ERR_INVALID_ARG */
ucoll_status_t op_check(ucoll_op_t op, ucoll_dtype_t dtype);
/* op_check, and op is defined for collective coll (AVG: reduce and allreduce only) */
ucoll_status_t op_check_coll(ucoll_coll_t coll, ucoll_op_t op, ucoll_dtype_t dtype);
/* 1 if op needs op_finish on a collective's result (AVG); inline: asked at every completion */
static inline int op_has_finish(ucoll_op_t op)
{
    return op == UCOLL_OP_AVG;
}
/* the last step of op on a complete result of `count` elements over nranks ranks: AVG divides
 * each element by nranks, rounding once; nothing for every other op */
void op_finish(ucoll_op_t op, ucoll_dtype_t dtype, void *buf, size_t count, int nranks);
/* 1 if the op is commutative (every predefined op; user ops as created) */
int op_is_commutative(ucoll_op_t op);
/* a request or a blocking call that refers to user op `op` begins / ends: ucoll_op_free refuses
 * (ERR_STATE) while it has any; nothing for predefined ops. op_hold: 0 if the user op is gone */
int op_hold(ucoll_op_t op);
void op_release(ucoll_op_t op);
/* the cost stated with ucoll_op_set_cost (ns per byte of one application), or -1 */
double op_stated_gamma(ucoll_op_t op);
/* inout[i] = in[i] (+) inout[i] for i < count; op/dtype must have passed op_check */
void op_apply(ucoll_op_t op, ucoll_dtype_t dtype, const void *in, void *inout, size_t count);
/* out[i] = in[i] (+) right[i]: op_apply of in onto a copy of right in out (out overlaps
 * neither) */
void op_apply_to(ucoll_op_t op, ucoll_dtype_t dtype, const void *in, const void *right, void *out,
                 size_t count);

#endif
