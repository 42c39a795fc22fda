/* The .npy reader on arbitrary bytes: refused with a message, or parsed
 * into exactly the bytes its header claims. */
#include <stdlib.h>

#include "fuzz_input.h"

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tj_npy a;
    char err[256];
    if (tj_npy_parse(data, size, &a, err, sizeof err) == 0) {
        if (a.bytes < 0 || (a.bytes && !a.data))
            abort();
        tj_npy_free(&a);
    } else if (!err[0]) {
        abort(); /* a refusal always says why */
    }
    return 0;
}
