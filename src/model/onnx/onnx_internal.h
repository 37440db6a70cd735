/* Internal to the ONNX reader: the parse context shared by its files, error helpers, and the ONNX
 * element-type table. Messages read "<file>: <where>: <reason>", where = "graph 'main': node 'conv1'
 * (Conv): attribute 'kernel_shape'". */
#ifndef TB_MODEL_ONNX_INTERNAL_H
#define TB_MODEL_ONNX_INTERNAL_H
#include <stdint.h>
#include <tensorbridge/status.h>
#include "core/arena.h"
#include "ir/ir.h"
#include "model/onnx/onnx_reader.h"
#include "model/onnx/pb.h"

enum {
  TB_ONNX_MAX_GRAPH_DEPTH = 32, /* subgraphs inside subgraphs */
  TB_ONNX_MAX_TYPE_DEPTH = 16,  /* sequence(optional(sequence(...))) */
  TB_ONNX_WHERE = 512           /* room for a "where" path in messages */
};

typedef struct onnx_ctx {
  tb_ir_model *m;
  const char *label;            /* file name for messages */
  const char *base_dir;         /* external data folder, or NULL to refuse external data */
  tb_onnx_mappings *external;
  int graph_depth;
} onnx_ctx;

/* Set the last error to "<label>: <where>: <reason>" and return st. */
tb_status tb_onnx_fail(const onnx_ctx *c, tb_status st, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Format a "where" path into at (cut to TB_ONNX_WHERE - 1 characters). */
void tb_onnx_at(char *at, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A malformed protobuf in `where` (r->error at its byte offset): TB_ERR_MODEL. */
tb_status tb_onnx_pb_fail(const onnx_ctx *c, const char *where, const tb_pb *r);
/* A field with the wrong wire type: TB_ERR_MODEL naming it. */
tb_status tb_onnx_wire_fail(const onnx_ctx *c, const char *where, const char *field, const tb_pb_field *f);
tb_status tb_onnx_oom(const onnx_ctx *c, const char *where);

/* A NUL-terminated copy of a length-delimited field in the arena; NULL on OOM. */
char *tb_onnx_strdup(tb_arena *arena, const tb_pb_field *f);

/* ONNX TensorProto.DataType code -> dtype: TB_OK, TB_ERR_UNSUPPORTED (a type ONNX defines that we do
 * not have: string, complex, uint16/32/64, 4-bit, fnuz fp8) or TB_ERR_MODEL (not an ONNX type). */
tb_status tb_onnx_dtype(int64_t code, tb_dtype *out);
/* "float", "int64", ... for a code; "?" when unknown. */
const char *tb_onnx_dtype_name(int64_t code);
/* The ONNX name of a dtype ("float" for f32). */
const char *tb_onnx_name_of(tb_dtype dtype);

/* ---- onnx_tensor.c ---- */
/* Parse the TensorProto in f into a tensor allocated in `arena` (struct and name; data zero-copy into
 * the buffer when aligned, else a block owned by c->m). `what` is "initializer", "attribute 'value'",
 * ... and names the tensor in messages after `where`. */
tb_status tb_onnx_read_tensor_field(const onnx_ctx *c, tb_arena *arena, const tb_pb_field *f, const char *where,
                           const char *what, tb_ir_tensor **out);

/* ---- onnx_graph.c ---- */
/* Parse the GraphProto in f into a new graph (parent NULL for the main graph). On failure *out is NULL
 * and nothing is left allocated. */
tb_status tb_onnx_read_graph(onnx_ctx *c, const tb_pb_field *f, tb_graph *parent, const char *where, tb_graph **out);
/* Parse a TypeProto into a value type. `strict`: a graph input/output, where a type we lack is an error
 * (otherwise the type is left unknown). */
tb_status tb_onnx_read_type(const onnx_ctx *c, const tb_pb_field *f, const char *where, bool strict, int depth,
                         tb_value_type *out);

/* ---- onnx_attr.c ---- */
/* Parse the AttributeProto in f into *a, strings/arrays/tensors/subgraphs allocated in g. */
tb_status tb_onnx_read_attr(onnx_ctx *c, tb_graph *g, const tb_pb_field *f, const char *where, tb_attr *a);
/* Destroy the subgraphs an attribute holds (for a node that was never added). */
void tb_onnx_attr_release(tb_attr *a);

/* ---- onnx_external.c ---- */
/* Resolve the tensor's external data (entries in f's TensorProto already split out) to its bytes:
 * location confined to c->base_dir, offset/length inside the file, the file mapped once. */
tb_status tb_onnx_external_bytes(const onnx_ctx *c, const char *where, const char *location, uint64_t offset,
                              bool has_length, uint64_t length, size_t expected, const uint8_t **out);

#endif
