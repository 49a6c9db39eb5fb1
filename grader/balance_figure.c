/* balance_figure: the balance pictures' arithmetic; see balance_figure.h. */
#include "balance_figure.h"

#include "rl_deadline.h"

size_t gr_bal_rate_so_far(const int64_t *open_ns, size_t nopen, size_t skip, int64_t start_ns, int64_t window_ns,
                          size_t nwin, int nclients, double scale, double *x, double *y)
{
    if (nclients <= 0 || window_ns <= 0)
        return 0;
    size_t k = skip; /* the next open not yet counted */
    for (size_t w = 0; w < nwin; w++) {
        int64_t end = start_ns + (int64_t)(w + 1) * window_ns;
        while (k < nopen && open_ns[k] <= end)
            k++;
        double world_min = (double)(end - start_ns) * scale / (60.0 * RL_NS_PER_SEC);
        x[w] = (double)(end - start_ns) * scale / RL_NS_PER_SEC;
        y[w] = (double)(k > skip ? k - skip : 0) / nclients / world_min;
    }
    return nwin;
}

size_t gr_bal_bunch_sizes(const int64_t *open_ns, size_t nopen, size_t skip, int64_t start_ns, int64_t span_ns,
                          double scale, double *x, double *y, size_t max)
{
    size_t n = 0, j = skip;
    for (size_t i = skip; i < nopen && n < max; i++) {
        if (j < i)
            j = i;
        while (j < nopen && open_ns[j] - open_ns[i] <= span_ns)
            j++;
        x[n] = (double)(open_ns[i] - start_ns) * scale / RL_NS_PER_SEC;
        y[n++] = (double)(j - i);
    }
    return n;
}
