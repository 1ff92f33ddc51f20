/*
 * cli.h — proton-cli, Tritium's viewer for Proton output (report, diff, html, events, merge).
 *
 * Role: reads `.hatchet` trees (ours and upstream Proton's) and our Chrome-trace `.json`
 * (docs/formats.md) into one in-memory call-path tree (CliProfile), derives metric columns
 * from it (time/ms, gflop32/s, ipc, ...) and renders them. Callers: cli_main.c (the
 * `proton-cli` binary), tests/unit/test_cli.c and the fuzz harness in tests/viewers/.
 *
 * Layout: like QBE's all.h, this one header holds every struct and groups the prototypes
 * of each file under a comment naming it; every viewers/src/cli_*.c includes it first.
 *
 * Ownership: a CliProfile owns every node, string and value reachable from it through its
 * arena; free it with cli_profile_destroy(). Strings handed out by the profile are borrowed.
 * Errors: readers return NULL and fill a CliErr with a one-line message (no trailing
 * newline, no program name); nothing in here calls exit() except the subcommand entry
 * points (cli_*_main), which return the process exit code instead. Out of memory is
 * fatal (cli_die), so ordinary code carries no OOM branches.
 * Thread safety: none needed; the tool is single-threaded.
 */
#ifndef CLI_H
#define CLI_H

#include <stddef.h>
#include <stdint.h>
#include <regex.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* Process exit codes shared by every subcommand. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_USAGE = 1, CLI_EXIT_INPUT = 2 };

/* Limits that keep hostile input from exhausting the stack or memory. */
enum {
    CLI_MAX_DEPTH = 400,        /* tree levels below ROOT (cJSON stops at 1000 JSON levels) */
    CLI_MAX_FILE_MB = 2048,     /* largest input file read */
    CLI_MAX_METRICS = 100000,   /* distinct metric names in one file */
};

/* Largest |ts| and dur of a trace event, in microseconds: 2^63 ns, rounded down. */
#define CLI_TRACE_MAX_US 9.2e15

#define CLI_VERSION "0.1.0"
#define CLI_LAUNCH_METADATA "__proton_launch_metadata"

/* ---- cli_util.c ----------------------------------------------------------------------- */

typedef struct CliErr {
    char msg[512];
} CliErr;

typedef struct CliArenaChunk CliArenaChunk;
typedef struct CliArena {
    CliArenaChunk *head;
} CliArena;

/* Growable byte buffer; always NUL-terminated after the first put. */
typedef struct CliBuf {
    char *s;
    size_t n, cap;
} CliBuf;

_Noreturn void cli_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_err_set(CliErr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *cli_xmalloc(size_t n);
void *cli_xcalloc(size_t n, size_t size);
void *cli_xrealloc(void *p, size_t n);
char *cli_xstrdup(const char *s);

void *cli_arena_alloc(CliArena *a, size_t n); /* zeroed, 16-byte aligned */
char *cli_arena_strdup(CliArena *a, const char *s);
char *cli_arena_strndup(CliArena *a, const char *s, size_t n);
void cli_arena_fini(CliArena *a);

void cli_buf_put(CliBuf *b, const char *s, size_t n);
void cli_buf_puts(CliBuf *b, const char *s);
void cli_buf_putc(CliBuf *b, char c);
void cli_buf_printf(CliBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_buf_fini(CliBuf *b);

/* Reads a whole file; caller owns *data (free()). Returns 0, or -1 with e set. */
int cli_file_read(const char *path, char **data, size_t *len, CliErr *e);
/* Writes len bytes to path through a temporary file and rename(). 0 or -1 with e set. */
int cli_file_write_atomic(const char *path, const char *data, size_t len, CliErr *e);

/* Where streamed output goes: a writer callback and its user pointer. */
typedef void (*CliWriteFn)(const char *s, size_t n, void *user);
/* A file written as it is produced, through "<path>.tmp.<pid>" and rename() ("-": stdout). */
typedef struct CliOut {
    FILE *f;
    const char *path;
    char *tmp;               /* NULL for stdout */
    int err;                 /* first write errno */
} CliOut;
int cli_out_open(CliOut *o, const char *path, CliErr *e);
void cli_out_write(const char *s, size_t n, void *user); /* a CliWriteFn; user = CliOut* */
/* Renames into place when ok and every write succeeded, else removes the temporary
 * file. 0 or -1 with e set. */
int cli_out_close(CliOut *o, int ok, CliErr *e);
/* A CliWriteFn appending to a CliBuf (user). */
void cli_buf_write(const char *s, size_t n, void *user);

int cli_streq_nocase(const char *a, const char *b);
int cli_has_suffix(const char *s, const char *suffix);
/* Shortest "%.*g" text (up to 17 digits) that reads back as v; writes to buf[32]. */
void cli_fmt_double(char buf[32], double v);
/* v rounded to 15 significant digits (what reports print: 18.607, not 18.607000000000003). */
double cli_round15(double v);
/* Fixed-point text like hatchet ("%.3f"), switching to "%.4g" for huge magnitudes. */
void cli_fmt_value(char buf[64], double v, int precision);
/* Compiles a Python-re.match-style pattern (anchored at the start, \d \w \s translated)
 * as a POSIX extended regex. Returns 0 or -1 with e set; free with cli_regex_fini(). */
typedef struct CliRegex {
    int ok;
    regex_t re;
} CliRegex;
int cli_regex_init(CliRegex *r, const char *pattern, CliErr *e);
int cli_regex_match(const CliRegex *r, const char *s);
void cli_regex_fini(CliRegex *r);
/* Parses a strictly positive-or-zero integer / a finite double option value. */
int cli_parse_int(const char *s, long lo, long hi, long *out);
int cli_parse_double(const char *s, double *out);
/* Colour decision for --color / --no-color (force: 1 on, 0 off, -1 auto = isatty). */
int cli_use_color(FILE *f, int force);
/* Prints "proton-cli: <cmd>: <msg>\n" on stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- cli_tree.c: the profile model ---------------------------------------------------- */

typedef enum CliValKind { CLI_V_NONE = 0, CLI_V_NUM, CLI_V_STR, CLI_V_VEC } CliValKind;

typedef struct CliVal {
    CliValKind kind;
    double num;       /* CLI_V_NUM; for CLI_V_VEC the sum of the elements */
    const char *str;  /* CLI_V_STR */
    const double *vec;
    int nvec;
} CliVal;

/* One metric value attached to a node while reading (a short list per node). */
typedef struct CliNodeVal CliNodeVal;
struct CliNodeVal {
    int metric;
    CliVal v;
    CliNodeVal *next;
};

enum {
    CLI_NODE_KERNEL = 1 << 0,   /* carries device_id/device_type: a kernel launch node */
    CLI_NODE_INKERNEL = 1 << 1, /* the kernel node itself or anything below it */
    CLI_NODE_SHOWN = 1 << 2,    /* survives the current include/exclude/threshold/depth */
    CLI_NODE_MATCH = 1 << 3,    /* scratch for filters */
    CLI_NODE_LAST = 1 << 4,     /* last shown child of its parent (tree connectors) */
    CLI_NODE_KEEP = 1 << 5,     /* scratch for filters */
};

typedef struct CliNode CliNode;
struct CliNode {
    const char *name;
    CliNode *parent, *first, *last, *next; /* children as a list, in file order */
    int nkids;
    int depth;    /* ROOT is 0 */
    int order;    /* position among siblings in the file */
    int seq;      /* pre-order number in the file order, set by cli_profile_finish */
    int flags;
    CliNodeVal *vals;
    double *col;      /* current computed columns (cli_metrics_compute), arena memory */
    const char **scol; /* string values of raw string columns, or NULL */
    void *aux;        /* scratch for diff/merge */
};

typedef struct CliMetricInfo {
    const char *name;
    int hinted;  /* on the root: summed up the tree (hatchet's inclusive rule) */
    int numeric; /* at least one numeric or vector value */
    int strings; /* at least one string value */
} CliMetricInfo;

typedef enum CliKind { CLI_KIND_HATCHET = 0, CLI_KIND_TRACE } CliKind;

typedef struct CliThread {
    const char *pid, *tid; /* ids as text ("1234", "0"), as the trace spelled them */
    const char *pname;     /* process name (metadata), may be NULL */
    const char *name;      /* thread name (metadata), may be NULL */
    double sort;           /* thread_sort_index, else the numeric tid */
    int nspans;
} CliThread;

enum { CLI_SPAN_KERNEL = 0, CLI_SPAN_PROGRAM, CLI_SPAN_SCOPE, CLI_SPAN_HOST, CLI_SPAN_OTHER,
       CLI_SPAN_COUNT };

typedef struct CliSpan {
    double ts, dur;  /* microseconds */
    int thread;      /* index into threads */
    int cat;         /* CLI_SPAN_* */
    int depth;       /* nesting level on its thread, filled by the reader */
    const char *name;
    const char *kernel; /* in-kernel scope: its kernel, else NULL */
} CliSpan;

typedef struct CliProfile {
    CliArena arena;
    const char *path;
    CliKind kind;
    CliNode *root;
    int nnodes;
    CliMetricInfo *metrics; /* malloc'd */
    int nmetrics, capmetrics;
    cJSON *device_info;     /* owned, may be NULL */
    /* summary, all borrowed from the arena, NULL when unknown */
    const char *counter_source, *clock_source, *cpu_model, *device_type, *tool;
    int num_cores;
    double clock_khz;
    int nthreads_max;       /* max "threads" metric seen */
    /* trace only */
    CliThread *threads;
    int nthreads, capthreads;
    CliSpan *spans;         /* the timeline kept (CLI_LOAD_SPANS): all, or the longest */
    int nspans, capspans;
    long spans_total;       /* X slices read while keeping the timeline (>= nspans) */
    long dropped_events;    /* otherData.dropped_events */
    double base_ns;         /* baseTimeNanoseconds, 0 when absent */
    int has_base;
    char **metric_index_keys; /* scratch hash for metric lookup (cli_tree.c) */
    int *metric_index_vals;
    int metric_index_cap;
} CliProfile;

/* FNV-1a hash of a NUL-terminated string. */
unsigned cli_hash_str(const char *s);
CliProfile *cli_profile_create(const char *path, CliKind kind);
void cli_profile_destroy(CliProfile *p);
/* Returns the id of metric 'name', adding it when absent. */
int cli_profile_metric_id(CliProfile *p, const char *name);
/* Returns the id of metric 'name' or -1. */
int cli_profile_metric_find(const CliProfile *p, const char *name);
CliNode *cli_node_new(CliProfile *p, CliNode *parent, const char *name);
/* Child of 'parent' named 'name', created when absent (linear scan, trees are small). */
CliNode *cli_node_child(CliProfile *p, CliNode *parent, const char *name);
/* Borrowed value of metric 'id' on node n, or NULL. */
const CliVal *cli_node_val(const CliNode *n, int id);
/* Sets (replace) / adds to (sum) a numeric value. */
void cli_node_set_num(CliProfile *p, CliNode *n, int id, double v);
void cli_node_add_num(CliProfile *p, CliNode *n, int id, double v);
void cli_node_max_num(CliProfile *p, CliNode *n, int id, double v);
void cli_node_set_str(CliProfile *p, CliNode *n, int id, const char *s);
void cli_node_set_val(CliProfile *p, CliNode *n, int id, const CliVal *v);
/* Finishes reading: depth, kernel flags, node count. Returns 0 or -1 (too deep). */
int cli_profile_finish(CliProfile *p, CliErr *e);
/* Pre-order walk without recursion. */
CliNode *cli_node_next_preorder(const CliNode *n, const CliNode *top);
/* Reorders every child list with cmp (stable: ties keep file order). */
void cli_tree_sort(CliNode *root, int (*cmp)(const CliNode *, const CliNode *, void *), void *user);
/* Appends a name escaped for a " > "-joined path: '\' becomes "\\" and a '>' after a
 * space "\>", so every " > " (found from the left) separates two names; readers split
 * there, then turn each "\x" into "x". */
void cli_path_put_name(CliBuf *b, const char *name);
/* "ROOT > a > b" path of a node, names escaped as above; caller owns it (free()). */
char *cli_node_path_dup(const CliNode *n);
int cli_count_kernels(const CliProfile *p);

/* ---- cli_stream.c: JSON read one value at a time ------------------------------------ */

/* A file read through a sliding window, or a memory block. */
typedef struct CliSrc {
    FILE *f;                /* NULL for memory */
    const char *path;
    char *buf;              /* the window: input bytes [base, base + n) */
    size_t n, cap, pos;     /* pos: next unread byte */
    uint64_t base;
    int eof, owned, keep_all; /* keep_all: never slide (the whole text stays in buf) */
    long line;              /* line of buf[lpos] (newlines counted up to lpos) */
    size_t lpos;
    uint64_t lstart;        /* input offset where that line starts */
    struct Block *arena;    /* the parsed values (cli_src_value) */
} CliSrc;

/* The text of a value inside the window; valid until the next read. */
typedef struct CliSpanText {
    const char *s;
    size_t n;
} CliSpanText;

/* Callbacks of cli_stream_trace(); each returns 0 or -1 with e set. 'field' gets every
 * top-level member but traceEvents (value and its text); 'event' every event. */
typedef struct CliTraceSink {
    int (*field)(void *user, const char *key, const cJSON *v, const CliSpanText *text, CliErr *e);
    int (*event)(void *user, const cJSON *ev, int idx, CliErr *e);
} CliTraceSink;

void cli_src_init_mem(CliSrc *s, const char *data, size_t len);
/* Opens a file ("-" is stdin); 0, or -1 with e set ("<path>: cannot open: ..."). */
int cli_src_open(CliSrc *s, const char *path, CliErr *e);
void cli_src_close(CliSrc *s);
/* The next non-whitespace byte (not consumed), -1 at the end, -2 with e set on error. */
int cli_src_peek(CliSrc *s, CliErr *e);
/* Parses the next value (nested in depth0 containers; 'key' names it in messages).
 * *out belongs to s: valid until cli_src_release(), never cJSON_Delete()d, and only
 * changed in place (cJSON_SetNumberValue). 0, or -1 with e set as cli_json_parse
 * would word it. */
int cli_src_value(CliSrc *s, int depth0, const char *key, cJSON **out, CliSpanText *text,
                  CliErr *e);
/* Frees every value parsed since the last call. */
void cli_src_release(CliSrc *s);
/* Reads everything left into buf (buf[0 .. n), from the start if nothing slid yet). */
int cli_src_slurp(CliSrc *s, CliErr *e);
/* Walks a Chrome trace (object with traceEvents, or an event list) from s. Sets
 * *has_events when a traceEvents list (or the list itself) was read. 0 or -1. */
int cli_stream_trace(CliSrc *s, const CliTraceSink *k, void *user, int *has_events, CliErr *e);

/* ---- cli_load.c ----------------------------------------------------------------------- */

/* What a load keeps besides the tree. */
enum {
    CLI_LOAD_SPANS = 1,         /* the timeline (html): all slices up to CLI_SPANS_KEEP, then
                                 * the longest CLI_SPANS_KEEP of them */
    CLI_SPANS_KEEP = 100000,
};

/* Parses JSON text, rejecting empty input, trailing garbage and non-finite numbers.
 * Caller owns the result (cJSON_Delete). NULL with e set on failure. */
cJSON *cli_json_parse(const char *data, size_t len, CliErr *e);
/* Rejects numbers cJSON read as infinite ("number out of range in key K"; 'key' names j
 * itself). 0 or -1 with e set. */
int cli_json_check_numbers(const cJSON *j, const char *key, CliErr *e);
/* Reads and parses a file; NULL with e set ("<path>: <why>"). */
cJSON *cli_json_load(const char *path, CliErr *e);
/* Builds a profile from parsed JSON (a .hatchet array or a trace object/array); does not
 * take ownership of j. Keeps the timeline. NULL with e set. */
CliProfile *cli_profile_from_json(const cJSON *j, const char *path, CliErr *e);
/* Reads a file (either kind, detected from the content; "-" is stdin). A Chrome trace is
 * streamed (cli_stream.c); a .hatchet tree is parsed whole. flags: CLI_LOAD_*. NULL
 * with e set. */
CliProfile *cli_profile_load_opts(const char *path, int flags, CliErr *e);
/* The same, keeping the timeline. */
CliProfile *cli_profile_load(const char *path, CliErr *e);
/* From an opened source; a trace's fields and events also go to 'tap' (may be NULL) once
 * the reader has accepted them. */
CliProfile *cli_profile_load_src(CliSrc *s, const char *path, int flags, const CliTraceSink *tap,
                                 void *tap_user, CliErr *e);
/* Same from memory (fuzzing, tests), keeping the timeline. */
CliProfile *cli_profile_load_mem(const char *data, size_t len, const char *path, CliErr *e);

/* ---- cli_read_hatchet.c --------------------------------------------------------------- */

int cli_read_hatchet(CliProfile *p, const cJSON *top, CliErr *e);

/* ---- cli_read_trace.c ----------------------------------------------------------------- */

/* Aggregates a trace event by event: create, cli_trace_field() per top-level member,
 * cli_trace_event() per event, cli_trace_finish(), destroy. Errors go to e (given at
 * create) and the calls return -1. */
typedef struct CliTraceReader CliTraceReader;
CliTraceReader *cli_trace_reader_create(CliProfile *p, int flags, CliErr *e);
int cli_trace_field(CliTraceReader *r, const char *key, const cJSON *v);
int cli_trace_event(CliTraceReader *r, const cJSON *ev, int idx);
int cli_trace_finish(CliTraceReader *r);
void cli_trace_reader_destroy(CliTraceReader *r);
/* The same over a parsed document. */
int cli_read_trace(CliProfile *p, const cJSON *top, int flags, CliErr *e);

/* ---- cli_metrics.c -------------------------------------------------------------------- */

typedef enum CliMetricKind {
    CLI_MK_RAW = 0,   /* a column of the file, inclusive when root-hinted */
    CLI_MK_TIME,      /* <base>/unit where base is a "(ns)" metric: time, cpu_time, ... */
    CLI_MK_AVG,       /* avg_<base>/unit: the same divided by count */
    CLI_MK_PCT,       /* <raw>/% */
    CLI_MK_RATE,      /* flops or bytes per second (flop/s, gflop32/s, gbyte/s, ...) */
    CLI_MK_IPC,       /* instructions / cycles */
    CLI_MK_COUNT_
} CliMetricKind;

typedef struct CliMetricSpec {
    char text[64];    /* as the user wrote it, e.g. "time/ms" */
    CliMetricKind kind;
    char base[64];    /* raw metric name it derives from ("time", "flops32", "bytes") */
    double factor;    /* value = raw * factor (unit conversion) */
    int higher_better; /* rates and ipc: a drop is a regression */
} CliMetricSpec;

/* Parses one spec ("time/ms", "gflop16/s", "cycles", "time/%"); 0 or -1 with e set. */
int cli_metric_parse(const char *text, CliMetricSpec *m, CliErr *e);
/* Parses a comma list into a malloc'd array; returns count or -1 with e set. */
int cli_metric_parse_list(const char *text, CliMetricSpec **out, CliErr *e);
/* Resolves a user metric name to a raw metric id of p (case-insensitive, unit
 * stripped: "time" matches "time (ns)"), or -1. */
int cli_metric_resolve(const CliProfile *p, const char *name);
/* The compiler remarks of node n (the kernel node's string metric "remarks": one
 * "file:line:col: message" per line), or NULL. Borrowed from the profile. */
const char *cli_node_remarks(const CliProfile *p, const CliNode *n);
/* Fills n->col[0..nm-1] (NaN = missing) and n->scol for every node. For each metric the
 * file cannot provide, sets missing[i] = 1 (array of nm ints supplied by the caller). */
void cli_metrics_compute(CliProfile *p, const CliMetricSpec *m, int nm, int *missing);
/* Inclusive value of raw metric id at n following the documented rule; NaN if none. */
double cli_metric_inclusive(const CliProfile *p, const CliNode *n, int id);
/* Prints what -l shows. */
void cli_metrics_list(const CliProfile *p, FILE *out);

/* ---- cli_view.c: filters, sorting, names and connectors shared by report and diff ---- */

typedef enum CliFormat { CLI_FMT_TEXT = 0, CLI_FMT_CSV, CLI_FMT_JSON } CliFormat;
typedef enum CliFrame { CLI_FRAME_FULL = 0, CLI_FRAME_FILE_FUNCTION_LINE, CLI_FRAME_FUNCTION_LINE,
                        CLI_FRAME_FILE_FUNCTION } CliFrame;
typedef enum CliSort { CLI_SORT_METRIC = 0, CLI_SORT_NAME, CLI_SORT_NONE } CliSort;

/* Options shared by report and diff: which nodes to show and how to name them. */
typedef struct CliView {
    int depth;            /* print nodes with depth < this (ROOT is depth 0); default 100 */
    double threshold;     /* keep nodes whose first metric >= threshold (and ancestors) */
    int has_threshold;
    CliRegex include, exclude;
    int has_include, has_exclude;
    CliFrame frame;
    CliSort sort;
    int sort_metric;      /* column index used for CLI_SORT_METRIC */
    int color;            /* resolved: 1 = ANSI colours */
} CliView;

/* Formats a frame name per -f into buf (returns buf). */
const char *cli_frame_format(const char *name, CliFrame f, char *buf, size_t len);
int cli_frame_parse(const char *s, CliFrame *f);
/* Marks CLI_NODE_SHOWN on the nodes that pass the view's filters (columns computed). */
void cli_view_apply(CliProfile *p, const CliView *v);
/* Sorts children per v->sort (columns computed). */
void cli_view_sort(CliProfile *p, const CliView *v);
/* Writes the tree connector prefix ("│  ├─ ") for node n into b. */
void cli_tree_prefix(CliBuf *b, const CliNode *n, const CliNode *top);
/* Parses --sort (metric, name, none, or one of the -m metrics); 0 or -1. */
int cli_sort_parse(const char *s, const CliMetricSpec *m, int nm, CliView *v);
/* The ANSI colour for value x in [lo, hi] (hot = red, like hatchet's map; NaN: dim). */
const char *cli_heat_color(double x, double lo, double hi);
void cli_view_fini(CliView *v);

/* ---- cli_report.c ---------------------------------------------------------------------- */

int cli_report_main(int argc, char **argv);

/* ---- cli_diff.c ----------------------------------------------------------------------- */

/* What diff compares and shows (its command-line options). */
typedef struct CliDiffOpts {
    CliMetricSpec m;
    CliView v;         /* depth, include/exclude, frame format (sort unused) */
    CliFormat fmt;
    double min_delta;  /* -t: hide rows whose |delta| is below */
    long top;          /* -n: at most this many rows; 0 = all */
    int color;
} CliDiffOpts;

/* Computes o->m on both profiles, matches their nodes by path and renders the ranked
 * rows into b. missing (NULL or two ints) says which profile lacks the metric. */
void cli_diff_render(CliProfile *base, CliProfile *new, const CliDiffOpts *o, CliBuf *b,
                     int missing[2]);
int cli_diff_main(int argc, char **argv);

/* ---- cli_html.c ----------------------------------------------------------------------- */

/* Writes the self-contained HTML page for p into b. */
void cli_html_render(CliProfile *p, CliBuf *b);
/* Escapes text for HTML element content and attribute values. */
void cli_html_escape(CliBuf *b, const char *s);
/* Appends JSON text made safe to embed inside <script> (no "</script>", no U+2028). */
void cli_json_script_escape(CliBuf *b, const char *json);
int cli_html_main(int argc, char **argv);

/* ---- cli_roofline.c: roofs of a machine (measured by cli_peak.c, cached) ------------------ */

/* A machine's roofs as the cache file holds them (fma indexed by CliPeakType). */
typedef struct CliPeaks {
    char cpu_model[256];
    int threads;
    double fma[3];      /* GFLOP/s on every thread: fp32, fp64, bf16 (0: not measured) */
    double read_gbps;   /* streaming read, GB/s */
    int vector_bytes, read_mib;
    double seconds;     /* how long measuring took */
    char measured_at[32];
    char path[4096];    /* the file they came from (or were cached in) */
} CliPeaks;

/* This machine's cache file for (model, threads); 0, or -1 when no cache dir is known. */
int cli_roof_cache_path(const char *model, int threads, char *out, size_t n);
/* This machine's roofs: from the cache, else (or when remeasure) measured with progress
 * on stderr and cached. 0, or -1 with e set when measuring fails. */
int cli_roof_machine_peaks(int remeasure, CliPeaks *pk, CliErr *e);
/* The roofs for profile p (NULL: this machine): from 'file', TRITIUM_ROOFLINE_PEAKS, the
 * cache of the CPU p ran on, or this machine's (measured when not cached). 1 with *pk
 * set, 0 when none apply (note says why), -1 with e set (a bad peaks file). note may be
 * set with 1 too (the profile does not name its CPU). */
int cli_roof_peaks_for(const CliProfile *p, const char *file, int remeasure, CliPeaks *pk,
                       char *note, size_t note_n, CliErr *e);
/* The FMA type whose roof applies to node n (its largest flops<w>: 64 -> fp64, 16 -> bf16,
 * else fp32); *width gets w. */
int cli_roof_type(const CliProfile *p, const CliNode *n, int *width);
/* The peak GFLOP/s of type t (the fp32 one when t was not measured). */
double cli_roof_peak_gflops(const CliPeaks *pk, int t);
int cli_roofline_main(int argc, char **argv);

/* ---- cli_events.c --------------------------------------------------------------------- */

int cli_events_main(int argc, char **argv);

/* ---- cli_merge.c ---------------------------------------------------------------------- */

/* Prints a cJSON value in the .hatchet layout (4-space indent, sorted keys, Python
 * json.dumps separators) into b. */
void cli_hatchet_print(CliBuf *b, const cJSON *j);
/* Prints JSON for people: 4-space indent, keys in order, scalar lists on one line. */
void cli_json_print(CliBuf *b, const cJSON *j);
/* Merges validated hatchet arrays into one tree with one child of ROOT per input, named
 * after the file; the inputs are not modified. Caller owns the result. Cannot fail. */
cJSON *cli_merge_hatchets(cJSON **in, const char **names, int n);

/* One input of cli_merge_write(): its file name (for messages and labels) and text, or
 * text NULL to read the file. */
typedef struct CliMergeIn {
    const char *path;
    const char *text; /* borrowed; need not be NUL-terminated */
    size_t len;
} CliMergeIn;

/* Merges n inputs into one Chrome trace (as_hatchet 0; every input must be a trace) or
 * one .hatchet tree (as_hatchet 1) and writes its text through w. Traces are read twice
 * (checked, then copied event by event), so memory does not grow with them; nothing is
 * written when an input is bad. 0, or -1 with e set ("<path>: <why>"). */
int cli_merge_write(const CliMergeIn *in, int n, int as_hatchet, CliWriteFn w, void *user,
                    CliErr *e);
int cli_merge_main(int argc, char **argv);

#endif /* CLI_H */
