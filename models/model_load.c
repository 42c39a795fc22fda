/* Which reader a model file goes to: its name says (.onnx), as the CLI's
 * users name them, or its first byte (an ONNX model saved under another
 * name); everything else stays with the OpenVINO reader, which also takes
 * the <layer> fragments the specs print. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "onnx_model.h"

static int tj_is_onnx_name(const char *path)
{
    size_t n = strlen(path);
    return n >= 5 && strcasecmp(path + n - 5, ".onnx") == 0;
}

int tj_onnx_available(void)
{
#ifdef TJ_WITH_ONNX
    return 1;
#else
    return 0;
#endif
}

#ifndef TJ_WITH_ONNX
/* Without the reader the interface stays, so that its callers (the CLI,
 * test_onnx) build alike: each call says why it cannot read. */
const char *tj_onnx_node_types(void)
{
    return "";
}

int tj_onnx_parse(const uint8_t *bytes, size_t len, const char *name, const char *dir,
                  const tj_model_opts *opts, tj_model *model, char *err, size_t err_len)
{
    (void)bytes, (void)len, (void)dir, (void)opts;
    memset(model, 0, sizeof *model);
    snprintf(err, err_len, "%s: this tensorjit was built without the ONNX reader (it needs "
             "protoc-c, libprotobuf-c-dev and libonnx-dev at build time)", name);
    return -1;
}

int tj_onnx_read(const char *path, const tj_model_opts *opts, tj_model *model, char *err,
                 size_t err_len)
{
    return tj_onnx_parse(NULL, 0, path, NULL, opts, model, err, err_len);
}
#endif

/* Whether the file starts as an ONNX model does: protobuf writes fields in
 * their numbers' order, and ModelProto's first, ir_version (field 1, a
 * varint: tag byte 0x08), is one every writer sets. XML starts with '<'
 * (after a byte-order mark or blanks), never with 0x08. */
static int tj_looks_onnx(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    int c = fgetc(f);
    fclose(f);
    return c == 0x08;
}

int tj_model_load(const char *path, const tj_model_opts *opts, tj_model *model, char *err,
                  size_t err_len)
{
    struct stat st;
    int found = stat(path, &st) == 0;
    if (found && S_ISDIR(st.st_mode)) { /* the readers said "too large" */
        memset(model, 0, sizeof *model);
        snprintf(err, err_len, "%s: is a folder, not a model file (give its .xml or .onnx)",
                 path);
        return -1;
    }
    /* a pipe's bytes, once read, are gone: only a regular file is sniffed */
    if (!tj_is_onnx_name(path) && !(found && S_ISREG(st.st_mode) && tj_looks_onnx(path)))
        return tj_model_read(path, opts, model, err, err_len);
    return tj_onnx_read(path, opts, model, err, err_len);
}
