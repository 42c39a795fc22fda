/* What both model readers (OpenVINO IR, ONNX) say of a layer the same way:
 * refused (the file is wrong: the command fails), skipped (the file does
 * not say enough), a read that fails as a whole, and shapes as text and
 * compared with a file's own. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ov_ir.h"

int tj_model_refuse(tj_model_layer *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->skip, sizeof out->skip, fmt, ap);
    va_end(ap);
    out->usable = 0;
    out->refused = 1;
    return -1;
}

int tj_model_skip(tj_model_layer *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->skip, sizeof out->skip, fmt, ap);
    va_end(ap);
    out->usable = 0;
    return -1;
}

void tj_model_note(tj_model_layer *out, const char *fmt, ...)
{
    size_t used = strlen(out->note);
    if (used && used + 2 < sizeof out->note)
        used += (size_t)snprintf(out->note + used, sizeof out->note - used, ", ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->note + used, sizeof out->note - used, fmt, ap);
    va_end(ap);
}

int tj_model_fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

void tj_model_shape_text(const jit_shape *s, const int64_t *bounds, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < s->rank && used + 48 < len; i++) {
        const char *sep = i ? "," : "";
        if (s->dims[i] != JIT_DIM_DYNAMIC)
            used += (size_t)snprintf(buf + used, len - used, "%s%" PRId64, sep, s->dims[i]);
        else if (bounds && bounds[i] > 0)
            used += (size_t)snprintf(buf + used, len - used, "%s?:%" PRId64, sep, bounds[i]);
        else
            used += (size_t)snprintf(buf + used, len - used, "%s?", sep);
    }
    snprintf(buf + used, len - used, "]");
}

int tj_model_shapes_agree(const jit_shape *derived, const jit_shape *declared)
{
    if (derived->rank != declared->rank)
        return 0;
    for (int i = 0; i < derived->rank; i++)
        if (derived->dims[i] != JIT_DIM_DYNAMIC && declared->dims[i] != JIT_DIM_DYNAMIC &&
            derived->dims[i] != declared->dims[i])
            return 0;
    return 1;
}
