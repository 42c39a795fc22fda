/*
 * Decoding a ModelProto with the code protoc-c generated from onnx.proto.
 * Two guards come first, because the generated decoder has neither:
 *  - depth: it recurses once per nested message, so a file of a few KiB
 *    nesting bodies in bodies would overflow the stack. The nesting is
 *    measured on the wire, driven by the generated descriptors (which
 *    field holds which message), before anything is decoded;
 *  - memory: a repeated field costs an array slot per occurrence, a few
 *    bytes of file buying a whole message struct; all allocations go
 *    through a counting allocator with a budget tied to the file's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* Decoded structs take more room than their bytes; 16x and 256 MiB more
 * covers real models (mostly raw_data, copied once) and stops a file of
 * empty repeated messages from asking for gigabytes. */
#define TJ_ONNX_BUDGET(len) ((size_t)(len) * 16 + ((size_t)256 << 20))

typedef struct tj_budget {
    size_t used, limit;
    int exceeded;
} tj_budget;

/* A header before each block keeps its size, for the free to give back. */
typedef union tj_block {
    size_t size;
    max_align_t align;
} tj_block;

static void *tj_budget_alloc(void *data, size_t size)
{
    tj_budget *b = data;
    if (size > b->limit - b->used || size > SIZE_MAX - sizeof(tj_block)) {
        b->exceeded = 1;
        return NULL;
    }
    tj_block *p = malloc(sizeof *p + size);
    if (!p)
        return NULL;
    p->size = size;
    b->used += size;
    return p + 1;
}

static void tj_budget_free(void *data, void *ptr)
{
    tj_budget *b = data;
    if (!ptr)
        return;
    tj_block *p = (tj_block *)ptr - 1;
    b->used -= p->size;
    free(p);
}

/* A varint at *p (before end) into *v; 0, or -1 when it runs off the end
 * or past ten bytes (the decoder will refuse such a file itself). */
static int tj_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; *p < end && shift < 70; shift += 7) {
        uint8_t c = *(*p)++;
        *v |= (uint64_t)(c & 0x7f) << (shift < 64 ? shift : 0);
        if (!(c & 0x80))
            return 0;
    }
    return -1;
}

/* The deepest nesting of messages in p[0, n), read as a `desc`, at most
 * TJ_ONNX_MAX_DEPTH + 1 (where it stops looking). Malformed bytes end the
 * walk without a verdict: the decoder judges them. */
static int tj_depth(const ProtobufCMessageDescriptor *desc, const uint8_t *p, size_t n, int depth)
{
    const uint8_t *end = p + n;
    int deepest = depth;
    while (p < end && deepest <= TJ_ONNX_MAX_DEPTH) {
        uint64_t tag, v;
        if (tj_varint(&p, end, &tag) != 0)
            break;
        int wire = (int)(tag & 7);
        if (wire == 0 && tj_varint(&p, end, &v) == 0)
            continue;
        if ((wire == 1 && end - p >= 8) || (wire == 5 && end - p >= 4)) {
            p += wire == 1 ? 8 : 4;
            continue;
        }
        if (wire != 2 || tj_varint(&p, end, &v) != 0 || v > (uint64_t)(end - p))
            break;
        uint64_t field = tag >> 3;
        const ProtobufCFieldDescriptor *f =
            field <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(desc, (unsigned)field)
                                : NULL;
        if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
            int d = tj_depth(f->descriptor, p, (size_t)v, depth + 1);
            deepest = d > deepest ? d : deepest;
        }
        p += v;
    }
    return deepest;
}

/* The model and the allocator it was decoded with, which its free needs. */
struct tj_onnx_doc {
    Onnx__ModelProto *model;
    ProtobufCAllocator alloc;
    tj_budget budget;
};

tj_onnx_doc *tj_onnx_decode(const uint8_t *bytes, size_t len, const char *name, char *err,
                            size_t err_len)
{
    if ((int64_t)len > TJ_ONNX_MAX_BYTES) {
        snprintf(err, err_len, "%s: larger than 2 GiB, protobuf's limit on a message", name);
        return NULL;
    }
    if (tj_depth(&onnx__model_proto__descriptor, bytes, len, 0) > TJ_ONNX_MAX_DEPTH) {
        snprintf(err, err_len, "%s: messages nest deeper than %d levels (a body in a body is 3 "
                 "more, node, attribute and graph: some %d nested If, Loop or Scan bodies): "
                 "refused before decoding", name, TJ_ONNX_MAX_DEPTH, (TJ_ONNX_MAX_DEPTH - 6) / 3);
        return NULL;
    }
    tj_onnx_doc *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, err_len, "%s: out of memory", name);
        return NULL;
    }
    d->budget.limit = TJ_ONNX_BUDGET(len);
    d->alloc = (ProtobufCAllocator){.alloc = tj_budget_alloc, .free = tj_budget_free,
                                    .allocator_data = &d->budget};
    d->model = onnx__model_proto__unpack(&d->alloc, len, bytes);
    if (!d->model) {
        if (d->budget.exceeded)
            snprintf(err, err_len, "%s: decoding it needs more than %zu MiB (repeated fields "
                     "far larger than the file's size suggests): refused", name,
                     d->budget.limit >> 20);
        else
            snprintf(err, err_len, "%s: not an ONNX model: its bytes do not decode as a "
                     "ModelProto (truncated, or not protobuf)", name);
        free(d);
        return NULL;
    }
    return d;
}

const Onnx__ModelProto *tj_onnx_model(const tj_onnx_doc *d)
{
    return d->model;
}

void tj_onnx_release(tj_onnx_doc *d)
{
    if (!d)
        return;
    onnx__model_proto__free_unpacked(d->model, &d->alloc);
    free(d);
}
