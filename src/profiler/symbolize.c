/*
 * symbolize.c - the locations of a code (a return address), resolved in
 * the process with elfutils' libdw: the call instruction at code - 1, its
 * chain of inlined functions as several locations (outermost first: the
 * real function at the call site of its inlined callee, ..., the innermost
 * inlined function at the instruction's own line), each with file, line,
 * column and function name. Without debug information: the ELF symbol
 * (C++ and Rust names demangled) and the module's file name, line 0;
 * without a symbol either, the module and the address in its ELF file
 * ("prog+0x1c14"); an address in no known module: its hex value in a
 * "[unknown]" file. A frame is never dropped. An address's compile unit
 * comes from libdw (through .debug_aranges), else from the units' own
 * address ranges (clang writes no .debug_aranges); its scopes from libdw,
 * else from a descent of our own (Rust nests functions in namespaces).
 *
 * Results are cached per code and strings interned for the session, so the
 * writer can be handed the same records every time it asks. All of it runs
 * under the session lock, with the thread's re-entrancy guard set (libdw's
 * own allocations are not sampled).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <libiberty/demangle.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/location.h"
#include "profiler/profiler_int.h"

typedef struct entry {
    uint64_t code;              /* 0 = empty */
    mt_location *locs;
    size_t n;
} entry;

/* Separate debug files (/usr/lib/debug, the -dbg packages) only when
 * MEMTRACE_DEBUGINFO asks for them: glibc's compressed debug information
 * alone costs ~0.1 s of inflating in every traced process. Without them a
 * library frame is its ELF symbol; the program's own DWARF is always used. */
static int no_separate_debuginfo(Dwfl_Module *mod, void **userdata,
                                 const char *modname, Dwarf_Addr base,
                                 const char *file_name, const char *debuglink_file,
                                 GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    (void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
    (void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
    return -1;
}

static Dwfl *dwfl;
/* libdwfl's own lookups, with the files they open and libdw keeps open
 * moved out of the program's way (fds.c). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name,
                    Dwarf_Addr base, char **file_name, Elf **elfp)
{
    return mt_fd_high(dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp));
}

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                          Dwarf_Addr base, const char *file_name,
                          const char *debuglink_file, GElf_Word debuglink_crc,
                          char **debuginfo_file_name)
{
    return mt_fd_high(dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
                                                   debuglink_file, debuglink_crc,
                                                   debuginfo_file_name));
}

static Dwfl_Callbacks callbacks = {
    .find_elf = find_elf,
    .find_debuginfo = no_separate_debuginfo,
};
static unsigned long long reported_adds;   /* dlpi_adds at the last report */
static int unloaded;            /* a library went: report every module again */
static entry *cache;
static size_t cache_cap, cache_n;
static char **strs;
static size_t strs_cap, strs_n;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The interned copy of s (NULL if out of memory). */
static const char *intern(const char *s)
{
    if ((strs_n + 1) * 2 > strs_cap) {
        size_t ncap = strs_cap ? strs_cap * 2 : 256;
        char **n = calloc(ncap, sizeof *n);
        if (!n)
            return NULL;
        for (size_t i = 0; i < strs_cap; i++)
            if (strs[i]) {
                size_t j = hash_str(strs[i]) & (ncap - 1);
                while (n[j])
                    j = (j + 1) & (ncap - 1);
                n[j] = strs[i];
            }
        free(strs);
        strs = n;
        strs_cap = ncap;
    }
    size_t j = hash_str(s) & (strs_cap - 1);
    for (; strs[j]; j = (j + 1) & (strs_cap - 1))
        if (strcmp(strs[j], s) == 0)
            return strs[j];
    size_t len = strlen(s) + 1;
    char *c = malloc(len);
    if (!c)
        return NULL;
    memcpy(c, s, len);
    strs[j] = c;
    strs_n++;
    return c;
}

/* How many objects the dynamic loader has loaded (dlpi_adds) and
 * unmapped (dlpi_subs) so far. */
static int counts_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    unsigned long long *c = data;
    c[0] = info->dlpi_adds;
    c[1] = info->dlpi_subs;
    return 1;
}

static unsigned long long loader_count(int which)
{
    unsigned long long c[2] = {0, 0};
    dl_iterate_phdr(counts_cb, c);
    return c[which];
}

unsigned long long mt_loader_adds(void)
{
    return loader_count(0);
}

unsigned long long mt_loader_subs(void)
{
    return loader_count(1);
}

static void modtabs_keep_reported(void);

/* The absolute name of the file mapped at lo (a mapping's start), from
 * /proc/self/maps, into out; 0, or -1 when there is none. For objects the
 * loader names relatively (dlopen("./libplug.so")): libdwfl opens only
 * absolute names, and the current directory may have changed since. */
static int mapped_file(uintptr_t lo, char *out, size_t size)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return -1;
    char line[PATH_MAX + 256];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        char *end;
        if (strtoull(line, &end, 16) != lo || *end != '-')
            continue;
        char *path = strchr(line, '/');
        if (path) {
            path[strcspn(path, "\n")] = 0;
            if (strlen(path) < size) {
                strcpy(out, path);
                found = 0;
            }
        }
        break;
    }
    fclose(f);
    return found;
}

/* One loaded object, as the loader has it: its file and the range its
 * segments take, reported as /proc/self/maps would show it (from the
 * first segment's page); libdwfl finds the file (find_elf) when it needs
 * it, and a module reported again as it was is kept. The program itself
 * comes first, named "" (its file is /proc/self/exe); objects without a
 * path (the vDSO) are left out. */
static int report_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    int *first = data;
    const char *path = info->dlpi_name;
    char exe[PATH_MAX];
    if (*first) {
        *first = 0;
        if (!path || !*path) {
            ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
            if (k <= 0)
                return 0;
            exe[k] = 0;
            path = exe;
        }
    }
    if (!path || !strchr(path, '/'))
        return 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0, page = (uintptr_t)getpagesize();
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if ((a & ~(page - 1)) < lo)
            lo = a & ~(page - 1);
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (lo >= hi)
        return 0;
    char abs[PATH_MAX];
    if (path[0] != '/' && mapped_file(lo, abs, sizeof abs) == 0)
        path = abs;
    dwfl_report_module(dwfl, path, lo, hi);
    return 0;
}

/* The process's modules, from the loader's list rather than from
 * /proc/self/maps: the maps also show libdw's own mappings of the files
 * it reads, one of which, just below a small library, made libdwfl place
 * that library 16 KiB too low when it read the maps again (its symbols
 * were lost after a dlclose). */
static void report(void)
{
    if (!dwfl) {
        const char *e = getenv("MEMTRACE_DEBUGINFO");
        if (e && *e && strcmp(e, "0") != 0)
            callbacks.find_debuginfo = find_debuginfo;
        dwfl = dwfl_begin(&callbacks);
        if (!dwfl)
            return;
        dwfl_report_begin(dwfl);
    } else if (unloaded) {
        /* every module reported again: those that are gone are dropped */
        dwfl_report_begin(dwfl);
    } else {
        dwfl_report_begin_add(dwfl);
    }
    int full = unloaded;
    unloaded = 0;
    reported_adds = mt_loader_adds();
    int first = 1;
    dl_iterate_phdr(report_object, &first);
    dwfl_report_end(dwfl, NULL, NULL);
    if (full)
        modtabs_keep_reported();
}

static Dwfl_Module *module_of(Dwarf_Addr pc)
{
    if (!dwfl || unloaded)
        report();
    if (!dwfl)
        return NULL;
    Dwfl_Module *m = dwfl_addrmodule(dwfl, pc);
    if (m)
        return m;
    /* Loaded since the last look at the loader's list (dlopen)? Look
     * again only then: JIT code, in no module, does not make us list the
     * objects at every new code. (dl_iterate_phdr takes the loader's list
     * lock, which is never held around a malloc, so it cannot wait for
     * our lock.) */
    if (mt_loader_adds() == reported_adds)
        return NULL;
    report();
    return dwfl_addrmodule(dwfl, pc);
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
    return s;
}

static int udata(Dwarf_Die *die, unsigned name, Dwarf_Word *v)
{
    Dwarf_Attribute a;
    return dwarf_formudata(dwarf_attr(die, name, &a), v) == 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Names and file names longer than this are clipped: two locations of
 * this size still fit in the format's 4096 bytes for one code (spec 5.5:
 * past that the writer would replace them all by the unknown location). */
#define MAX_NAME 1000

/* s, or its clipped copy in buf (MAX_NAME + 1 bytes): a name keeps its
 * head, a file name its tail (the base name matters). */
static const char *clip(const char *s, char *buf, int keep_tail)
{
    size_t len = strlen(s);
    if (len <= MAX_NAME)
        return s;
    if (keep_tail) {
        memcpy(buf, "...", 3);
        memcpy(buf + 3, s + len - (MAX_NAME - 3), MAX_NAME - 3);
    } else {
        memcpy(buf, s, MAX_NAME - 3);
        memcpy(buf + MAX_NAME - 3, "...", 3);
    }
    buf[MAX_NAME] = 0;
    return buf;
}

#define MAX_INLINE 64

static Dwarf_Die *cu_by_ranges(Dwfl_Module *mod, Dwarf_Addr pc, Dwarf_Addr *bias);

/* One step down scope_chain's path: the child of parent, or of a namespace
 * or module among its children (searched to depth 16), that is a function,
 * inlined call or block whose ranges hold pc; 1 found (*out), 0 none.
 * (Types are not searched: C++ defines its methods outside them, and Rust
 * its impl blocks' functions in namespaces; their members are many.) */
static int scope_child(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
    Dwarf_Die c;
    if (depth > 16 || dwarf_child(parent, &c) != 0)
        return 0;
    do {
        switch (dwarf_tag(&c)) {
        case DW_TAG_namespace:
        case DW_TAG_module:
            if (scope_child(&c, pc, out, depth + 1))
                return 1;
            break;
        case DW_TAG_subprogram:
        case DW_TAG_inlined_subroutine:
        case DW_TAG_lexical_block:
        case DW_TAG_entry_point:
            if (dwarf_haspc(&c, pc) > 0) {
                *out = c;
                return 1;
            }
            break;
        default:
            break;
        }
    } while (dwarf_siblingof(&c, &c) == 0);
    return 0;
}

/* The scopes of cu that hold pc, innermost first (malloc'd into *out, as
 * dwarf_getscopes_die gives them), found by a descent of our own: libdw
 * 0.188's dwarf_getscopes does not look inside DW_TAG_namespace, where
 * Rust puts every function (every frame of a Rust program was its ELF
 * symbol at line 0, and its inlined calls were lost). Returns how many. */
static int scope_chain(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **out)
{
    /* (on the heap: this may run on a thread with a small stack) */
    enum { MAX_PATH = 2 * MAX_INLINE };
    Dwarf_Die *path = malloc(MAX_PATH * sizeof *path);
    int n = 0;
    Dwarf_Die d = *cu;
    while (path && n < MAX_PATH && scope_child(&d, pc, &path[n], 0))
        d = path[n++];
    for (int i = 0; i < n / 2; i++) {           /* innermost first */
        d = path[i];
        path[i] = path[n - 1 - i];
        path[n - 1 - i] = d;
    }
    *out = path;
    return n;
}

/* Locations of pc into out[0..], outermost first; returns how many (0 if
 * the module has no DWARF for pc). */
static size_t from_dwarf(Dwfl_Module *mod, Dwarf_Addr pc, mt_location *out)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias);
    if (!cu)
        cu = cu_by_ranges(mod, pc, &bias);
    if (!cu)
        return 0;
    Dwarf_Die *scopes = NULL;
    int ns = dwarf_getscopes(cu, pc - bias, &scopes);
    if (ns > 0) {
        /* dwarf_getscopes follows an inlined instance to its abstract
         * origin; the parent chain of the innermost DIE gives the concrete
         * nesting. */
        Dwarf_Die inner = scopes[0];
        free(scopes);
        scopes = NULL;
        ns = dwarf_getscopes_die(&inner, &scopes);
    }
    if (ns <= 0) {
        free(scopes);
        ns = scope_chain(cu, pc - bias, &scopes);
    }
    if (ns <= 0) {
        free(scopes);
        return 0;
    }
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    dwarf_getsrcfiles(cu, &files, &nfiles);

    /* Innermost first into tmp, then reversed. */
    mt_location tmp[MAX_INLINE];
    size_t n = 0;
    const char *file = NULL;
    int line = 0, col = 0;
    Dwarf_Line *dl = dwarf_getsrc_die(cu, pc - bias);
    if (dl) {
        file = dwarf_linesrc(dl, NULL, NULL);
        dwarf_lineno(dl, &line);
        dwarf_linecol(dl, &col);
    }
    for (int i = 0; i < ns && n < MAX_INLINE; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine &&
            tag != DW_TAG_entry_point)
            continue;
        const char *fn = die_name(&scopes[i]);
        tmp[n].function = fn ? fn : "??";
        tmp[n].filename = file ? file : "<unknown>";
        tmp[n].line = line;
        tmp[n].start_char = col;
        tmp[n].end_char = col;
        n++;
        if (tag != DW_TAG_inlined_subroutine)
            break;
        /* The next function out is at this one's call site. */
        Dwarf_Word v;
        file = NULL;
        line = col = 0;
        if (files && udata(&scopes[i], DW_AT_call_file, &v))
            file = dwarf_filesrc(files, v, NULL, NULL);
        if (udata(&scopes[i], DW_AT_call_line, &v))
            line = (int)v;
        if (udata(&scopes[i], DW_AT_call_column, &v))
            col = (int)v;
    }
    free(scopes);
    char cbuf[MAX_NAME + 1];
    for (size_t i = 0; i < n; i++) {
        out[i] = tmp[n - 1 - i];
        out[i].function = intern(clip(out[i].function, cbuf, 0));
        out[i].filename = intern(clip(out[i].filename, cbuf, 1));
        if (!out[i].function || !out[i].filename)
            return 0;
    }
    /* Too long for one location event (a deep chain of inlined templates):
     * the frames in the middle of the chain go; the real function and the
     * innermost line stay. */
    while (n > 2 && mt_locw_max_size(out, n) > MT_LOC_MAX_LENGTH) {
        memmove(out + 1, out + 2, (n - 2) * sizeof *out);
        n--;
    }
    return n;
}

/* ---- per module: ELF symbols, compile units' ranges -----------------------
 * dwfl_module_addrname scans every symbol of the module at each call: for
 * libLLVM's ~60 000 that was ~2 ms a code, and clang at one sample per
 * 64 KiB ran 6.2 s instead of 1.1. Each module's function symbols are read
 * once into a table sorted by address, searched by bisection. */

typedef struct fsym {
    uint64_t lo, size;          /* in the process's address space */
    const char *name;           /* the ELF string table's (libdw keeps it) */
    int rank;                   /* binding: 0 global, 1 weak, 2 local */
    int ndx;                    /* in the symbol table (last tie-break) */
} fsym;

/* A compile unit's address range (one of its ranges), for modules whose
 * DWARF has no .debug_aranges (clang's default), where libdw 0.188's
 * dwfl_module_addrdie finds nothing: every frame of a clang-built program
 * lost its file and line. */
typedef struct cu_range {
    Dwarf_Addr lo, hi;          /* in the module's DWARF addresses (pc - bias) */
    Dwarf_Die cu;
} cu_range;

/* What is read once per module looked at: its function symbols, and (only
 * if needed) its compile units' address ranges. */
typedef struct modtab {
    Dwfl_Module *mod;
    fsym *v;                    /* function symbols, sorted by address */
    size_t n;
    int syms_read;
    cu_range *cus;              /* sorted by lo */
    size_t ncus;
    Dwarf_Addr bias;
    int cus_read;
} modtab;

static modtab *modtabs;         /* one per module looked at */
static size_t nmodtabs, modtabs_cap;

static int fsym_cmp(const void *a, const void *b)
{
    const fsym *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->rank != y->rank)         /* aliases: the global name first */
        return x->rank - y->rank;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return x->ndx - y->ndx;
}

/* mod's record, made (empty) at the first look. */
static modtab *modtab_of(Dwfl_Module *mod)
{
    for (size_t i = 0; i < nmodtabs; i++)
        if (modtabs[i].mod == mod)
            return &modtabs[i];
    if (nmodtabs == modtabs_cap) {
        size_t cap = modtabs_cap ? 2 * modtabs_cap : 16;
        modtab *t = realloc(modtabs, cap * sizeof *t);
        if (!t)
            return NULL;
        modtabs = t;
        modtabs_cap = cap;
    }
    modtab *t = &modtabs[nmodtabs++];
    memset(t, 0, sizeof *t);
    t->mod = mod;
    return t;
}

/* t's function symbols, read and sorted at the first lookup. */
static void read_symbols(modtab *t)
{
    Dwfl_Module *mod = t->mod;
    t->syms_read = 1;
    int total = dwfl_module_getsymtab(mod);
    if (total <= 1 || !(t->v = malloc((size_t)total * sizeof *t->v)))
        return;                     /* (no symbols: every lookup fails) */
    for (int i = 1; i < total; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
        if (!name || !*name || shndx == SHN_UNDEF ||
            (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE))
            continue;
        t->v[t->n++] = (fsym){addr, sym.st_size, name,
                              bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2, i};
    }
    qsort(t->v, t->n, sizeof *t->v, fsym_cmp);
}

/* The function symbol of mod at pc: the closest one at or below pc that
 * contains it, else the closest sizeless one (hand-written assembly); NULL
 * in a gap between functions (a stripped static function). */
static const char *symbol_at(Dwfl_Module *mod, uint64_t pc)
{
    modtab *t = modtab_of(mod);
    if (t && !t->syms_read)
        read_symbols(t);
    if (!t || !t->n || pc < t->v[0].lo)
        return NULL;
    size_t lo = 0, hi = t->n;       /* the last entry with lo <= pc */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].lo <= pc)
            lo = mid;
        else
            hi = mid;
    }
    while (lo > 0 && t->v[lo - 1].lo == t->v[lo].lo)
        lo--;                       /* the best name of that address */
    const char *sizeless = t->v[lo].size ? NULL : t->v[lo].name;
    /* a sized function that contains pc, at or below it (a few back:
     * sizeless labels may sit inside it) */
    for (size_t i = lo + 1, k = 0; i-- > 0 && k < 64; k++)
        if (t->v[i].size && pc - t->v[i].lo < t->v[i].size)
            return t->v[i].name;
    return sizeless;
}

static int cu_range_cmp(const void *a, const void *b)
{
    const cu_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* t's compile units' address ranges, read and sorted at the first lookup
 * that libdw's own (through .debug_aranges) could not answer. */
static void read_cu_ranges(modtab *t)
{
    t->cus_read = 1;
    size_t cap = 0;
    Dwarf_Addr bias = 0;
    for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(t->mod, cu, &bias)) != NULL;) {
        Dwarf_Addr base, lo, hi;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
            if (hi <= lo)
                continue;
            if (t->ncus == cap) {
                size_t c = cap ? 2 * cap : 64;
                cu_range *v = realloc(t->cus, c * sizeof *v);
                if (!v)
                    goto done;
                t->cus = v;
                cap = c;
            }
            t->cus[t->ncus++] = (cu_range){lo, hi, *cu};
        }
    }
done:
    t->bias = bias;
    if (t->ncus)                /* (cus is NULL without any: not for qsort) */
        qsort(t->cus, t->ncus, sizeof *t->cus, cu_range_cmp);
}

/* The compile unit of mod that holds pc, by its ranges (see cu_range), or
 * NULL; *bias gets the module's. */
static Dwarf_Die *cu_by_ranges(Dwfl_Module *mod, Dwarf_Addr pc, Dwarf_Addr *bias)
{
    modtab *t = modtab_of(mod);
    if (t && !t->cus_read)
        read_cu_ranges(t);
    if (!t || !t->ncus)
        return NULL;
    Dwarf_Addr a = pc - t->bias;
    size_t lo = 0, hi = t->ncus;    /* the first range with lo > a */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->cus[mid].lo <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* (ranges of different units do not overlap in a sane module; a few
     * back in case they do) */
    for (size_t i = lo, k = 0; i-- > 0 && k < 8; k++)
        if (a < t->cus[i].hi) {
            *bias = t->bias;
            return &t->cus[i].cu;
        }
    return NULL;
}

/* After modules were dropped: the symbol tables of those that are still
 * reported are kept (libdwfl keeps a module reported again as it was, at
 * the same address: libc's table is not sorted again at every dlclose);
 * the others go, before their freed modules' addresses can be reused. */
static int note_module(Dwfl_Module *mod, void **userdata, const char *name,
                       Dwarf_Addr start, void *arg)
{
    (void)userdata, (void)name, (void)start;
    for (size_t i = 0; i < nmodtabs; i++)
        if (modtabs[i].mod == mod)
            ((char *)arg)[i] = 1;
    return DWARF_CB_OK;
}

static void modtabs_keep_reported(void)
{
    char *live = calloc(nmodtabs ? nmodtabs : 1, 1);
    if (live)
        dwfl_getmodules(dwfl, note_module, live, 0);
    size_t n = 0;
    for (size_t i = 0; i < nmodtabs; i++) {
        if (live && live[i]) {
            modtabs[n++] = modtabs[i];
        } else {
            free(modtabs[i].v);
            free(modtabs[i].cus);
        }
    }
    nmodtabs = n;
    free(live);
}

static void modtabs_free(void)
{
    for (size_t i = 0; i < nmodtabs; i++) {
        free(modtabs[i].v);
        free(modtabs[i].cus);
    }
    free(modtabs);
    modtabs = NULL;
    nmodtabs = modtabs_cap = 0;
}

/* A C++ or Rust symbol as the program's source spells it, or NULL:
 * libiberty's demanglers, linked in (libstdc++'s __cxa_demangle, which
 * this used before, is the same C++ demangler, but only a C++ program
 * has it, and Rust programs have none: their release builds, with no
 * DWARF, showed every frame mangled). Rust first: its legacy symbols are
 * C++ manglings with a hash (main::build::h6c7f...), which rust_demangle
 * takes off; it refuses C++ symbols. Both return NULL rather than exit
 * when out of memory (the linked objects have no xmalloc). */
static char *demangle(const char *fn)
{
    if (fn[0] != '_' || (fn[1] != 'Z' && fn[1] != 'R'))
        return NULL;
    char *d = rust_demangle(fn, DMGL_PARAMS);
    if (!d && fn[1] == 'Z')
        d = cplus_demangle_v3(fn, DMGL_PARAMS | DMGL_TYPES);
    return d;
}

static size_t from_symbols(Dwfl_Module *mod, Dwarf_Addr pc, uint64_t addr,
                           mt_location *out)
{
    char buf[300];
    const char *fn = NULL, *file = "[unknown]";
    Dwarf_Addr bias = 0;
    if (mod) {
        fn = symbol_at(mod, pc);
        const char *mname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL,
                                             NULL, NULL);
        if (mname)
            file = base_name(mname);
        if (!fn && dwfl_module_getelf(mod, &bias)) {
            /* no symbol either (a stripped program's own functions): the
             * module and the address in its ELF file, the same in every
             * run whatever the load address, for addr2line -e */
            snprintf(buf, sizeof buf, "%s+0x%llx", file,
                     (unsigned long long)(addr - bias));
            fn = buf;
        }
    }
    if (!fn) {
        snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)addr);
        fn = buf;
    }
    char *readable = demangle(fn);
    if (readable)
        fn = readable;
    char cbuf[MAX_NAME + 1];
    out[0].function = intern(clip(fn, cbuf, 0));
    free(readable);
    out[0].filename = intern(file);
    out[0].line = out[0].start_char = out[0].end_char = 0;
    return out[0].function && out[0].filename ? 1 : 0;
}

static entry *slot_of(uint64_t code)
{
    size_t mask = cache_cap - 1;
    size_t i = (size_t)((code * 0x9E3779B97F4A7C15ull) >> 20) & mask;
    while (cache[i].code && cache[i].code != code)
        i = (i + 1) & mask;
    return &cache[i];
}

static int grow_cache(void)
{
    size_t ncap = cache_cap ? cache_cap * 2 : 1024;
    entry *old = cache;
    size_t ocap = cache_cap;
    cache = calloc(ncap, sizeof *cache);
    if (!cache) {
        cache = old;
        return -1;
    }
    cache_cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].code)
            *slot_of(old[i].code) = old[i];
    free(old);
    return 0;
}

int mt_symbolize(void *ctx, uint64_t code, const mt_location **locs, size_t *n)
{
    (void)ctx;
    static const mt_location unknown = {"<unknown>", "??", 1, 1, 1};
    if ((cache_n + 1) * 2 > cache_cap && grow_cache() < 0)
        goto fail;
    entry *e = slot_of(code);
    if (!e->code) {
        mt_location tmp[MAX_INLINE];
        uint64_t addr = mt_code_addr(code);
        Dwarf_Addr pc = addr - 1;
        Dwfl_Module *mod = module_of(pc);
        size_t k = mod ? from_dwarf(mod, pc, tmp) : 0;
        if (k == 0)
            k = from_symbols(mod, pc, addr, tmp);
        if (k == 0)
            goto fail;
        mt_location *l = malloc(k * sizeof *l);
        if (!l)
            goto fail;
        memcpy(l, tmp, k * sizeof *l);
        e->code = code;
        e->locs = l;
        e->n = k;
        cache_n++;
    }
    *locs = e->locs;
    *n = e->n;
    return 0;
fail:
    *locs = &unknown;
    *n = 1;
    return 0;
}

/* The unwinding rule of the frame whose return address is ra (unwind.c's
 * fast unwinder), from the module's .eh_frame as libdw reads it, for the
 * call at ra - 1: where the CFA is (the stack pointer or the frame pointer
 * plus an offset), where the return address and the caller's frame pointer
 * were saved. Anything else (no module, no CFI, a signal frame, rules that
 * are expressions or use other registers) gives MT_CFI_BAD: such frames
 * are left to libunwind. */
/* Is the register rule ops (n of them) "saved at CFA + off"? */
static int at_cfa_plus(const Dwarf_Op *ops, size_t n, int64_t *off)
{
    if (n != 2 || ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst)
        return 0;
    *off = (int64_t)ops[1].number;
    return 1;
}

void mt_symbolize_cfi(uint64_t ra, mt_cfi_rule *r)
{
    memset(r, 0, sizeof *r);
    r->flags = MT_CFI_BAD;
    Dwarf_Addr bias, pc = ra - 1;
    Dwfl_Module *mod = module_of(pc);
    Dwarf_CFI *cfi = mod ? dwfl_module_eh_cfi(mod, &bias) : NULL;
    Dwarf_Frame *f;
    if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &f) != 0)
        return;
    bool sig = 0;
    Dwarf_Op *ops, mem[3];
    size_t n;
    uint8_t flags = 0;
    int64_t cfa_off, ra_off = 0, bp_off = 0;
    if (dwarf_frame_info(f, NULL, NULL, &sig) < 0 || sig ||
        dwarf_frame_cfa(f, &ops, &n) != 0 || n != 1)
        goto out;
    /* CFA = register + offset: DW_OP_bregx reg, off (or DW_OP_bregN off) */
    if (ops[0].atom == DW_OP_bregx && (ops[0].number == 6 || ops[0].number == 7)) {
        flags |= ops[0].number == 6 ? MT_CFI_RBP_BASE : 0;
        cfa_off = (int64_t)ops[0].number2;
    } else if (ops[0].atom == DW_OP_breg6 || ops[0].atom == DW_OP_breg7) {
        flags |= ops[0].atom == DW_OP_breg6 ? MT_CFI_RBP_BASE : 0;
        cfa_off = (int64_t)ops[0].number;
    } else {
        goto out;
    }
    if (cfa_off < INT32_MIN || cfa_off > INT32_MAX)
        goto out;
    /* the return address (DWARF register 16): saved at CFA + off, or
     * undefined (the outermost frame: _start, clone) */
    if (dwarf_frame_register(f, 16, mem, &ops, &n) != 0)
        goto out;
    if (n == 0 && ops == mem)
        flags |= MT_CFI_END;
    else if (!at_cfa_plus(ops, n, &ra_off))
        goto out;
    /* the caller's frame pointer (register 6): unchanged, saved at CFA +
     * off, or lost */
    if (dwarf_frame_register(f, 6, mem, &ops, &n) != 0)
        goto out;
    if (n == 0)
        flags |= ops ? MT_CFI_RBP_LOST : 0;
    else if (at_cfa_plus(ops, n, &bp_off))
        flags |= MT_CFI_RBP_SAVED;
    else
        goto out;
    if (ra_off < INT8_MIN || ra_off > INT8_MAX || bp_off < INT16_MIN || bp_off > INT16_MAX ||
        ((cfa_off | ra_off | bp_off) & 7))
        goto out;
    r->cfa_off = (int32_t)cfa_off;
    r->ra_off = (int8_t)ra_off;
    r->rbp_off = (int16_t)bp_off;
    r->flags = flags;
out:
    free(f);
}

void mt_symbolize_unloaded(void)
{
    unloaded = dwfl != NULL;
}

void mt_symbolize_reset(void)
{
    for (size_t i = 0; i < cache_cap; i++)
        if (cache[i].code)
            free(cache[i].locs);
    free(cache);
    cache = NULL;
    cache_cap = cache_n = 0;
    for (size_t i = 0; i < strs_cap; i++)
        free(strs[i]);
    free(strs);
    strs = NULL;
    strs_cap = strs_n = 0;
    modtabs_free();
    if (dwfl)
        dwfl_end(dwfl);
    dwfl = NULL;
    unloaded = 0;
}
