/* logitcmp.h: two runs of one text compared row by row of logits, and the windows a text longer
   than the context is run in -- one home for what examples/score --kl and examples/lowbit report.

     lc_window_len   the tokens of the window that starts at `start`
     lc_n_windows    how many windows a text of n tokens takes
     lc_stats        what a comparison adds up; lc_add adds one scored token, lc_kl_mean,
                     lc_top1, lc_rms, lc_ppl_ref and lc_ppl_run read it out

   Windows: a text of n tokens runs in windows of at most C tokens, each from an empty cache; a
   window after the first starts with the previous window's last token, so that every token but
   the first is scored exactly once (the first tokens of a window with little context).
   Comparison: row p of the reference run and row q of the other, both the logits after token
   `at` that predict token `next`: KL(p || q) of their softmaxes in double, whether their argmax
   agrees (the first maximum, as numpy's argmax), the squared logit difference, and each run's
   negative log-likelihood of `next`.
   Include after dintattn.h; C99. */
#ifndef DINTATTN_LOGITCMP_H
#define DINTATTN_LOGITCMP_H

#include <math.h>

#if defined(__GNUC__)
#define LC_FN static __attribute__((unused)) /* not every example calls every function */
#else
#define LC_FN static
#endif

/* Tokens in the window of a text of n tokens that starts at start (windows of at most C >= 2). */
LC_FN int lc_window_len(int n, int C, int start)
{
    return n - start < C ? n - start : C;
}

/* Windows of at most C >= 2 tokens that a text of n >= 1 tokens takes; the next window starts at
   start + lc_window_len(...) - 1 while start + len < n. */
LC_FN int lc_n_windows(int n, int C)
{
    return n <= C ? 1 : 1 + (n - C + (C - 2)) / (C - 1);
}

/* What a comparison adds up over the scored tokens (zero it to start). */
typedef struct lc_stats {
    double sum_kl, max_kl, sum_sq_diff, nll_ref, nll_run;
    long long n_rows, n_same_top, n_values;
    int max_at; /* the token after which KL was largest */
} lc_stats;

/* log(sum_j exp(x[j])) in double, shifted by the maximum (an infinity or NaN maximum as it is). */
LC_FN double lc_log_sum_exp(const float *x, int n)
{
    double mx = -HUGE_VAL, s = 0;
    int j;
    for (j = 0; j < n; j++)
        if (x[j] > mx) mx = x[j];
    if (!isfinite(mx)) return mx;
    for (j = 0; j < n; j++) s += exp((double)x[j] - mx);
    return mx + log(s);
}

/* The first index of the largest of x[0..n). */
LC_FN int lc_argmax(const float *x, int n)
{
    int j, best = 0;
    for (j = 1; j < n; j++)
        if (x[j] > x[best]) best = j;
    return best;
}

/* Adds one scored token: p the reference's row of V logits, q the other run's, both after token
   `at`, predicting token `next`. A NaN KL is kept as the maximum, so that it shows. */
LC_FN void lc_add(lc_stats *k, const float *p, const float *q, int V, int at, int next)
{
    const double lp = lc_log_sum_exp(p, V), lq = lc_log_sum_exp(q, V);
    double kl = 0;
    int j;
    for (j = 0; j < V; j++) {
        const double a = (double)p[j] - lp, b = (double)q[j] - lq, d = (double)q[j] - (double)p[j];
        if (exp(a) > 0) kl += exp(a) * (a - b); /* 0 log 0 = 0: a token the reference rules out */
        k->sum_sq_diff += d * d;
    }
    if (k->n_rows == 0 || kl > k->max_kl || isnan(kl)) k->max_kl = kl, k->max_at = at;
    k->sum_kl += kl;
    k->n_values += V;
    k->n_same_top += lc_argmax(p, V) == lc_argmax(q, V);
    k->nll_ref -= (double)p[next] - lp;
    k->nll_run -= (double)q[next] - lq;
    k->n_rows++;
}

/* The mean KL(ref || run) per scored token, the fraction of tokens whose argmax agrees, the RMS of
   the logit difference, and each run's perplexity exp(mean NLL) (0 rows: as over 1). */
LC_FN double lc_rows(const lc_stats *k) { return k->n_rows ? (double)k->n_rows : 1; }
LC_FN double lc_kl_mean(const lc_stats *k) { return k->sum_kl / lc_rows(k); }
LC_FN double lc_top1(const lc_stats *k) { return (double)k->n_same_top / lc_rows(k); }
LC_FN double lc_rms(const lc_stats *k) { return sqrt(k->sum_sq_diff / (k->n_values ? (double)k->n_values : 1)); }
LC_FN double lc_ppl_ref(const lc_stats *k) { return exp(k->nll_ref / lc_rows(k)); }
LC_FN double lc_ppl_run(const lc_stats *k) { return exp(k->nll_run / lc_rows(k)); }

#endif /* DINTATTN_LOGITCMP_H */
