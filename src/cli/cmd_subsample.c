/*
 * cmd_subsample.c - `memtrace subsample [OPTIONS] IN OUT FACTOR [START END]`:
 * keep each sample with probability 1/FACTOR (spec 11.5). The output's
 * sample rate is the input's divided by FACTOR; an allocation survives with
 * the number of its samples that were kept (binomial), under a new
 * sequential id; promotions and collections of surviving allocations follow
 * them, everything else is dropped. Memory use is bounded by the number of
 * surviving allocations not yet collected (a hash map old id -> new id).
 */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/numtext.h"
#include "cli/rewrite.h"
#include "util/u64map.h"

#define CMD "subsample"

void usage_subsample(FILE *out)
{
    fprintf(out,
            "Usage: memtrace subsample [OPTIONS] IN OUT FACTOR [START END]\n"
            "\n"
            "Write to OUT a sparser version of the trace IN, as if it had been\n"
            "recorded with a sample rate FACTOR times lower, to make a large trace\n"
            "smaller and faster to analyse. Every sample of every allocation is kept\n"
            "independently with probability 1/FACTOR. An allocation with at least\n"
            "one kept sample is written with the number of samples kept, its own\n"
            "timestamp, length, source and backtrace, and a new object id (0, 1,\n"
            "2, ... in output order); the others are dropped, as are allocations\n"
            "without samples (count <= 0). Promotions and collections of kept\n"
            "allocations follow them under their new ids; all other promotions and\n"
            "collections are dropped. OUT's trace info is IN's with the sample rate\n"
            "divided by FACTOR; timestamps are unchanged.\n"
            "\n"
            "With START and END, only allocations made at least START and less than\n"
            "END whole seconds after the start of the trace are considered:\n"
            "    START <= floor((time - start time) / 1e6) < END\n"
            "(with FACTOR 1 this cuts a time window out of the trace).\n"
            "\n"
            "Arguments:\n"
            "  IN          the trace to read (format v001, v002 or v003); - for\n"
            "              standard input\n"
            "  OUT         the trace to write (created or replaced); must not be\n"
            "              IN, even under another name; - for standard output\n"
            "              (not a terminal)\n"
            "  FACTOR      integer >= 1; FACTOR 1 keeps every sample, so every\n"
            "              allocation with samples is copied, in order (ids are\n"
            "              renumbered from 0: those of allocations without samples,\n"
            "              or outside START..END, are not kept)\n"
            "  START END   integers, START < END (seconds since the start of the\n"
            "              trace; may be negative)\n"
            "\n"
            "Options:\n"
            "  --seed N             seed the random generator with N, an integer\n"
            "                       from 0 to 18446744073709551615: runs with the\n"
            "                       same seed, input and arguments write identical\n"
            "                       files. Without --seed the generator is seeded\n"
            "                       from the clock and the process id, and the\n"
            "                       result differs from run to run.\n"
            "  --format-version N   write format version N: 2 (default) or 3\n"
            "                       (v003 with a single domain)\n"
            "  --                   end of options (for file names starting with -)\n"
            "  -h, --help           show this help\n"
            "\n"
            "If IN is damaged, OUT receives the result for every event before the\n"
            "damage (a valid trace), the problem and its offset are reported on\n"
            "stderr and the command exits with status 1.\n"
            CLI_HELP_OUT_FILE
            "\n"
            "Examples:\n"
            "  memtrace subsample big.ctf small.ctf 100\n"
            "  memtrace subsample --seed 1 app.ctf startup.ctf 1 0 10\n"
            "\n"
            "Exit status: 0 success, 1 bad trace or I/O error, 2 bad usage.\n");
}

/* ---- random numbers: xoshiro256** seeded through splitmix64 ------------- */

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rng_seed(rng *g, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(rng *g)
{
    uint64_t *s = g->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in (0, 1]: never 0, so its logarithm is finite. */
static double rng_unit(rng *g)
{
    return (double)((rng_next(g) >> 11) + 1) * 0x1.0p-53;
}

/* Standard normal (Marsaglia's polar method). */
static double rng_normal(rng *g)
{
    for (;;) {
        double u = 2 * rng_unit(g) - 1, v = 2 * rng_unit(g) - 1;
        double s = u * u + v * v;
        if (s > 0 && s < 1)
            return u * sqrt(-2 * log(s) / s);
    }
}

/* log(1 + t) - t without cancellation for small t. */
static double log1p_minus(double t)
{
    if (t > -1e-3 && t < 1e-3) {
        double t2 = t * t;
        return -t2 / 2 + t2 * t / 3 - t2 * t2 / 4 + t2 * t2 * t / 5;
    }
    return log1p(t) - t;
}

/* Gamma(a, 1) for a >= 1 (Marsaglia and Tsang). The acceptance test
 * d - d*v + d*log(v) is computed from t = c*x without cancellation, so it
 * stays exact for the huge shapes binomial splitting uses. */
static double rng_gamma(rng *g, double a)
{
    double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = rng_normal(g), t = c * x;
        if (t <= -1)
            continue;
        double v = (1 + t) * (1 + t) * (1 + t);
        /* 1 - v + log v = 3(log1p(t) - t) - 3t^2 - t^3 */
        double f = 3 * log1p_minus(t) - 3 * t * t - t * t * t;
        if (log(rng_unit(g)) < 0.5 * x * x + d * f)
            return d * v;
    }
}

/* Binomial(n, p), 0 < p < 1: the number of successes among n independent
 * trials. Small expected counts skip from success to success with geometric
 * gaps; large n is first reduced by Knuth's beta splitting (TAOCP 3.4.1,
 * exercise 3.4.1-F): the a-th smallest of n uniforms is Beta(a, n+1-a), and
 * it tells how many of the a-1 or n-a other ones fall below p. */
static int64_t rng_binomial(rng *g, int64_t n, double p)
{
    int64_t base = 0;
    while (n > 0 && p > 0) {
        if (p >= 1)
            return base + n;
        double q = p < 0.5 ? p : 1 - p;
        if ((double)n * q < 32) {
            /* Few of the rarer outcome expected: jump from one to the next
             * with geometric gaps, about n*q+1 steps. */
            double l = log1p(-q);
            int64_t pos = 0, k = 0;
            for (;;) {
                /* trials up to and including the next one: 1 + floor(gap) */
                double gap = log(rng_unit(g)) / l;
                if (gap >= (double)(n - pos))
                    break;
                pos += (int64_t)gap + 1;
                k++;
            }
            return base + (p < 0.5 ? k : n - k);
        }
        int64_t a = n / 2 + 1, b = n + 1 - a;
        double ga = rng_gamma(g, (double)a), gb = rng_gamma(g, (double)b);
        double x = ga / (ga + gb);
        if (x >= p) {           /* the a-th smallest is above p */
            n = a - 1;
            p = p / x;
        } else {                /* a of them are below p */
            base += a;
            n = b - 1;
            p = (p - x) / (1 - x);
        }
    }
    return base;
}

/* ---- argument parsing ------------------------------------------------- */

/* Decimal integer, optional sign, whole string, in range. */
static int parse_int64(const char *s, int64_t *v)
{
    char *end;
    if (!mt_plain_integer(s))
        return -1;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *v = x;
    return 0;
}

static int parse_uint64(const char *s, uint64_t *v)
{
    char *end;
    if (s[0] == '-' || !mt_plain_integer(s))
        return -1;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *v = x;
    return 0;
}

/* Looks like a negative number (a positional START/END, not an option). */
static int is_negative_number(const char *s)
{
    if (s[0] != '-' || !s[1])
        return 0;
    for (s++; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* floor(dt / 1e6) for any sign of dt. */
static int64_t whole_seconds(int64_t dt)
{
    int64_t q = dt / 1000000;
    if (dt % 1000000 < 0)
        q--;
    return q;
}

/* ---- the work --------------------------------------------------------- */

typedef struct sub_params {
    int64_t factor;
    int windowed;
    int64_t start, end;
} sub_params;

typedef struct sub_state {
    const sub_params *sp;
    rng *g;
    double p;                    /* 1 / factor */
    u64map map;                  /* old id -> new id of kept, live objects */
} sub_state;

static void divide_rate(mt_trace_info *info, void *ctx)
{
    const sub_state *s = ctx;
    info->sample_rate /= (double)s->sp->factor;
}

static int subsample_event(cli_rewrite *rw, const mt_event *ev, void *ctx)
{
    sub_state *s = ctx;
    const sub_params *sp = s->sp;
    if (ev->kind == MT_EVENT_ALLOC) {
        /* (every allocation, dropped ones too: otherwise whether a damaged
         * trace is noticed would depend on the random draws) */
        if (!cli_rewrite_defined(rw, ev))
            return MT_ERR_LOCATION;     /* run_events names the code */
        if (sp->windowed) {
            int64_t sec = whole_seconds(ev->time - mt_reader_info(rw->r)->start_time);
            if (sec < sp->start || sec >= sp->end)
                return MT_OK;
        }
        if (ev->nsamples <= 0)
            return MT_OK;
        int64_t kept = sp->factor == 1 ? ev->nsamples
                                       : rng_binomial(s->g, ev->nsamples, s->p);
        if (kept <= 0)
            return MT_OK;
        int64_t id;
        int st = cli_rewrite_alloc(rw, ev, ev->time, kept, &id);
        if (st == MT_OK && u64map_put(&s->map, (uint64_t)ev->id, (uint64_t)id))
            st = MT_ERR_NOMEM;
        return st;
    }
    uint64_t id;
    if (ev->kind == MT_EVENT_PROMOTE) {
        const uint64_t *v = u64map_get(&s->map, (uint64_t)ev->id);
        return v ? mt_writer_promote(rw->w, ev->time, (int64_t)*v) : MT_OK;
    }
    if (!u64map_del(&s->map, (uint64_t)ev->id, &id))
        return MT_OK;
    return mt_writer_collect(rw->w, ev->time, (int64_t)id);
}

int cmd_subsample(int argc, char **argv)
{
    const char *pos[5];
    int npos = 0, version = 2, have_seed = 0;
    uint64_t seed = 0;
    int opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opts_done) {
            if (npos == 5)
                return cli_usage_error(CMD, "too many arguments");
            pos[npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            opts_done = 1;
            continue;
        }
        if (cli_is_help(a)) {
            usage_subsample(stdout);
            return EXIT_OK;
        }
        const char *v;
        int k = cli_opt_value(CMD, argc, argv, &i, "--format-version", &v);
        if (k > 0) {
            if (strcmp(v, "2") != 0 && strcmp(v, "3") != 0)
                return cli_usage_error(CMD, "--format-version takes 2 or 3, got '%s'", v);
            version = v[0] - '0';
            continue;
        }
        if (k == 0)
            k = cli_opt_value(CMD, argc, argv, &i, "--seed", &v);
        if (k < 0)
            return EXIT_USAGE;
        if (k > 0) {
            if (parse_uint64(v, &seed))
                return cli_usage_error(CMD, "--seed takes an integer from 0 to "
                                       "18446744073709551615 (got '%s')", v);
            have_seed = 1;
            continue;
        }
        if (a[0] == '-' && a[1] != 0 && !is_negative_number(a))
            return cli_usage_error(CMD, "unknown option '%s'", a);
        if (npos == 5)
            return cli_usage_error(CMD, "too many arguments");
        pos[npos++] = a;
    }
    if (npos != 3 && npos != 5)
        return cli_usage_error(CMD, npos < 3 ? "expected IN OUT FACTOR [START END]"
                                             : "START needs an END");
    const char *in = pos[0], *out = pos[1];
    sub_params sp = {0};
    if (parse_int64(pos[2], &sp.factor) || sp.factor < 1)
        return cli_usage_error(CMD, "FACTOR must be an integer >= 1 (got '%s')",
                               pos[2]);
    if (npos == 5) {
        sp.windowed = 1;
        if (parse_int64(pos[3], &sp.start))
            return cli_usage_error(CMD, "START must be an integer (got '%s')", pos[3]);
        if (parse_int64(pos[4], &sp.end))
            return cli_usage_error(CMD, "END must be an integer (got '%s')", pos[4]);
        if (sp.start >= sp.end)
            return cli_usage_error(CMD, "START must be less than END (got %s and %s: "
                                   "no second is in START <= s < END)", pos[3], pos[4]);
    }
    rng g;
    if (!have_seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
        seed ^= (uint64_t)getpid() << 40 ^ (uint64_t)getpid();
    }
    rng_seed(&g, seed);

    sub_state st = {&sp, &g, 1.0 / (double)sp.factor, {0}};
    cli_rewrite_spec spec = {0};
    spec.cmd = CMD;
    spec.in = in;
    spec.out = out;
    spec.format_version = version;
    spec.edit_info = divide_rate;
    spec.on_event = subsample_event;
    spec.ctx = &st;
    int rc = cli_rewrite_run(&spec);
    u64map_free(&st.map);
    return rc;
}
