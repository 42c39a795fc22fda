/* Runtime functions that generated kernels call on their cold paths. They
 * take the kernel's own entry address, find its plan and write the same
 * message the reference kernel writes. */
#ifndef TJ_JIT_SUPPORT_H
#define TJ_JIT_SUPPORT_H

int tj_rt_bad_index(const void *self, const void *indices);
int tj_rt_bad_pointer(const void *self, const void *data, const void *indices,
                      const void *updates, const void *out);

/* A split kernel's copies over the pool, up to its plan's thread count. */
int tj_rt_parallel(const void *self, const void *data, const void *indices, const void *updates,
                   void *out);

#endif
