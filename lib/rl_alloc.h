/* rl_alloc: allocation that cannot fail. Servers and CLIs treat out-of-memory
 * as fatal (it aborts with the file and line), so no call path carries a
 * NOMEM code. Reusable libraries (the config validator) must not use it. */
#ifndef RL_ALLOC_H
#define RL_ALLOC_H

#include <stddef.h>

void *rl_xmalloc_at(size_t n, const char *file, int line);
void *rl_xcalloc_at(size_t count, size_t n, const char *file, int line);
void *rl_xrealloc_at(void *p, size_t n, const char *file, int line);
char *rl_xstrdup_at(const char *s, const char *file, int line);
void *rl_grow_at(void *arr, size_t *cap, size_t first, size_t size, const char *file, int line);

/* Each returns memory the caller frees with free(); never NULL. */
#define rl_xmalloc(n)     rl_xmalloc_at((n), __FILE__, __LINE__)
#define rl_xcalloc(c, n)  rl_xcalloc_at((c), (n), __FILE__, __LINE__)
#define rl_xrealloc(p, n) rl_xrealloc_at((p), (n), __FILE__, __LINE__)
#define rl_xstrdup(s)     rl_xstrdup_at((s), __FILE__, __LINE__)

/* The growing array: makes room for one more element in |arr|, which holds
 * |n| of |cap| (a size_t lvalue). When it is full, |cap| doubles (to |first|
 * from 0) and |arr| is reallocated; elements keep their values. An
 * expression of type void; |arr| and |cap| are evaluated more than once. */
#define RL_GROW(arr, n, cap, first)                                                                                    \
    ((n) < (cap) ? (void)0 : (void)((arr) = rl_grow_at((arr), &(cap), (first), sizeof *(arr), __FILE__, __LINE__)))

/* Lets the allocator return freed memory to the kernel from a thread of its
 * own, a second after it was freed, even while the program is idle (see
 * rl_alloc.c for what that was measured to change). Starts a thread: call
 * it once the program may have threads. Returns 0, or -1 when the
 * allocator refused; a no-op without jemalloc (sanitizer builds). */
int rl_alloc_purge_in_background(void);

#endif
